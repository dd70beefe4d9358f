"""More activations for ``paddle.nn.functional``: hardtanh, selu, celu, softshrink, hardshrink,
thresholded_relu as ops with Paddle's kink conventions; tanhshrink, softsign, log_sigmoid and glu
as compositions."""

from __future__ import annotations

from ..errors import ShapeError
from ..kernels.codegen import lit
from . import elementwise as ew
from .activation import activation, exp_branch, sigmoid, softplus
from .shape import split

hardtanh_op = activation(
    "hardtanh",
    lambda min, max: f"min(max({{x}}, {lit(min)}), {lit(max)})",  # noqa: A006 - Paddle's names
    lambda min, max: f"T(1.0) if {lit(min)} < {{x}} < {lit(max)} else T(0.0)",  # noqa: A006
    defaults={"min": -1.0, "max": 1.0},
    kinks=[-1, 1],
)


selu_op = activation(
    "selu",
    lambda scale, alpha: f"{lit(scale)} * ({{x}} if {{x}} > T(0.0) else {lit(alpha)} * math.expm1({{x}}))",
    lambda scale, alpha: f"{lit(scale)} if {{x}} > T(0.0) else {lit(scale * alpha)} * math.exp({{x}})",
    lambda a, scale, alpha: exp_branch(a, scale * alpha, 1.0),
    defaults={"scale": 1.0507009873554805, "alpha": 1.6732632423543772},
    kinks=[0],
)
celu_op = activation(
    "celu",
    lambda alpha: f"{{x}} if {{x}} > T(0.0) else {lit(alpha)} * math.expm1({{x}} / {lit(alpha)})",
    lambda alpha: f"T(1.0) if {{x}} > T(0.0) else math.exp({{x}} / {lit(alpha)})",
    lambda a, alpha: exp_branch(a, 1.0 / alpha, alpha),
    defaults={"alpha": 1.0},
    kinks=[0],
)


def _outside(threshold) -> str:
    """1 where ``|x| > threshold`` (NaN: 0), the shrink activations' derivative."""
    return f"T(1.0) if {{x}} > {lit(threshold)} else (T(1.0) if {{x}} < {lit(-threshold)} else T(0.0))"


softshrink_op = activation(
    "softshrink",
    lambda threshold: (
        f"{{x}} - {lit(threshold)} if {{x}} > {lit(threshold)} else "
        f"({{x}} + {lit(threshold)} if {{x}} < {lit(-threshold)} else T(0.0))"
    ),
    _outside,
    defaults={"threshold": 0.5},
    kinks=[-0.5, 0.5],
)
hardshrink_op = activation(
    "hardshrink",
    lambda threshold: f"{{x}} if {{x}} > {lit(threshold)} else ({{x}} if {{x}} < {lit(-threshold)} else T(0.0))",
    _outside,
    defaults={"threshold": 0.5},
    kinks=[-0.5, 0.5],
)
thresholded_relu_op = activation(
    "thresholded_relu",
    lambda threshold, value: f"{{x}} if {{x}} > {lit(threshold)} else {lit(value)}",
    lambda threshold, value: f"T(1.0) if {{x}} > {lit(threshold)} else T(0.0)",
    defaults={"threshold": 1.0, "value": 0.0},
    kinks=[1],
)


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002 - Paddle's names
    return hardtanh_op(x, min=float(min), max=float(max))


def selu(x, scale=1.0507009873554805, alpha=1.6732632423543772, name=None):
    if scale <= 1.0 or alpha < 0:
        raise ValueError(f"selu: scale must be > 1 and alpha >= 0, got scale={scale}, alpha={alpha}")
    return selu_op(x, scale=float(scale), alpha=float(alpha))


def celu(x, alpha=1.0, name=None):
    if alpha == 0:
        raise ZeroDivisionError("celu: alpha must not be 0")
    return celu_op(x, alpha=float(alpha))


def softshrink(x, threshold=0.5, name=None):
    if threshold < 0:
        raise ValueError(f"softshrink: threshold must be >= 0, got {threshold}")
    return softshrink_op(x, threshold=float(threshold))


def hardshrink(x, threshold=0.5, name=None):
    return hardshrink_op(x, threshold=float(threshold))


def thresholded_relu(x, threshold=1.0, value=0.0, name=None):
    return thresholded_relu_op(x, threshold=float(threshold), value=float(value))


def tanhshrink(x, name=None):
    """``x - tanh(x)``."""
    return x - ew.UNARY["tanh"](x)


def softsign(x, name=None):
    """``x / (1 + |x|)``."""
    return x / (ew.UNARY["abs"](x) + 1.0)


def log_sigmoid(x, name=None):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large |x|."""
    return -softplus(-x)


logsigmoid = log_sigmoid


def glu(x, axis=-1, name=None):
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second half."""
    if x.shape[axis] % 2:
        raise ShapeError(f"glu: dim {axis} of x{x.shape} must be even to split into value and gate halves")
    a, b = split(x, 2, axis)
    return a * sigmoid(b)


FUNCTIONAL = [
    "hardtanh", "selu", "celu", "softshrink", "hardshrink", "thresholded_relu", "tanhshrink", "softsign",
    "log_sigmoid", "logsigmoid", "glu",
]  # fmt: skip
