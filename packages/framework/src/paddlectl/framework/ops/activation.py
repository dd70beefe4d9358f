"""Activations and softmax, differentiable to any order.

An activation is one record: its scalar expression (``expr``) is both its eager kernel (generated,
``kernels.launch``) and its form inside a fused group, and its gradient is a backward op
``<name>_grad(a, g) = g * f'(a)`` (``a`` the input, or the output where ``f'`` reads better
from it) whose kernel is generated from the derivative's expression, so backward costs one pass
as a hand-written kernel did. The backward op's own vjp is written in ops (``second``, the
derivative of ``f'``), so ``paddle.grad(create_graph=True)`` can go on differentiating. Softmax /
log_softmax are fused row kernels, with row-kernel backward ops of the same kind.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import items as item_rules
from ..core.dtype import convert_dtype
from ..core.op import ELEMENTWISE, OPAQUE, OpDef, Sample
from ..core.shapes import normalize_axis, same_as_first
from ..errors import DTypeError, ShapeError
from ..kernels import activation as K
from ..kernels.codegen import lit, template
from ..kernels.launch import run
from . import elementwise as ew
from ._util import constant
from .broadcast import sum_to
from .creation import zeros_like
from .shape import split


def require_float(op: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: expected a floating-point tensor (float16/32/64), got {x.dtype}; cast it first")


def sigmoid_expr(v: str = "{x}") -> str:
    """The logistic function of the scalar expression ``v``, without overflow for either sign: with
    ``e = exp(-|v|)``, ``1 / (1 + e)`` for v >= 0 and ``e / (1 + e)`` below (the same numbers as
    ``exp(v) / (1 + exp(v))``), so a vectorised loop, which computes both sides, takes one exp."""
    e = f"math.exp(-abs({v}))"
    return f"((T(1.0) if {v} >= T(0.0) else {e}) / (T(1.0) + {e}))"


def _filled(fn, defaults: dict):
    """A template-valued function of attrs (the record's ``expr`` form), the op's defaults filled in."""
    if isinstance(fn, str):
        return fn
    return lambda attrs: fn(**{**defaults, **attrs})


def _kink_free(kinks):
    """Samples for the conformance sweep: inputs in [-4, 4] kept 0.1 from every kink (where finite
    differences straddle a jump in the derivative)."""

    def samples(rng, n_inputs: int = 1):
        arrays = []
        for _ in range(n_inputs):
            x = rng.uniform(-4, 4, (3, 4))
            for k in kinks:
                near = np.abs(x - k) < 0.1
                x[near] = k + np.where(x[near] >= k, 0.2, -0.2)
            arrays.append(x)
        return [Sample(tuple(arrays))]

    return samples


def activation(name: str, expr, deriv, second=None, *, of_output=False, defaults=None, kinks=()) -> OpDef:
    """An elementwise activation from its scalar expression ``expr`` and its derivative's ``deriv``
    (over ``{x}``: the input, or the output when ``of_output``), each a template or a function of
    the attrs (``defaults`` filled in) giving one. ``second(a, **attrs)`` is the derivative of
    ``deriv`` in ops, None where it is 0 almost everywhere (piecewise linear activations)."""
    defaults = defaults or {}
    expr, deriv = _filled(expr, defaults), _filled(deriv, defaults)
    samples = _kink_free(kinks)

    def forward(ctx, x, **attrs):
        require_float(name, x)
        return run(template(expr, attrs), name, x)

    def grad_forward(ctx, a, g, **attrs):
        return run(template(grad_expr, attrs), f"{name}_grad", a, g)

    def grad_expr_of(attrs):
        return f"{{y}} * ({template(deriv, attrs)})"

    grad_expr = grad_expr_of if callable(deriv) else grad_expr_of({})

    def grad_vjp(ctx, h):
        a, needs = ctx.input(0), ctx.needs_input_grad
        ga = None
        if needs[0]:  # zeros where f' is piecewise constant, as PyTorch's double backward gives
            ga = zeros_like(a, h.dtype) if second is None else h * ctx.input(1) * second(a, **{**defaults, **ctx.attrs})
        return ga, grad_op(a, h, **ctx.attrs) if needs[1] else None

    grad_op = OpDef(
        f"{name}_grad", grad_forward, grad_vjp, same_as_first, ELEMENTWISE, expr=grad_expr,
        samples=lambda rng: samples(rng, 2),
    )  # fmt: skip

    def vjp(ctx, g):
        return grad_op(ctx.output(0) if of_output else ctx.input(0), g, **ctx.attrs)

    return OpDef(name, forward, vjp, same_as_first, ELEMENTWISE, expr=expr, samples=samples)


def _select(cond, a, b, like):
    """``a`` where ``cond`` holds, else ``b``; Python numbers become constants of ``like``'s dtype."""
    a = constant(a, like.dtype) if isinstance(a, int | float) else a
    b = constant(b, like.dtype) if isinstance(b, int | float) else b
    return ew.where(cond, a, b)


def _step(cond: str, then: str, otherwise: str = "T(0.0)") -> str:
    return f"{then} if {cond} else {otherwise}"


relu_op = activation(
    "relu", "T(0.0) if {x} <= T(0.0) else {x}", "T(1.0) if {x} > T(0.0) else T(0.0)", of_output=True, kinks=[0]
)
relu6_op = activation(
    "relu6", "min(max({x}, T(0.0)), T(6.0))", "T(1.0) if T(0.0) < {x} < T(6.0) else T(0.0)", kinks=[0, 6]
)
sigmoid_op = activation("sigmoid", sigmoid_expr(), "{x} * (T(1.0) - {x})", lambda a: 1 - 2 * a, of_output=True)


def _silu_second(a):
    s = sigmoid_op(a)
    return s * (1 - s) * (2 + a * (1 - 2 * s))


silu_op = activation(
    "silu",
    f"{{x}} * {sigmoid_expr()}",
    f"{sigmoid_expr()} * (T(1.0) + {{x}} * (T(1.0) - {sigmoid_expr()}))",
    _silu_second,
)

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _gelu_expr(approximate=False):
    if approximate:
        return f"T(0.5) * {{x}} * (T(1.0) + math.tanh({lit(_SQRT_2_PI)} * ({{x}} + {lit(_GELU_C)} * {{x}} * {{x}} * {{x}})))"
    return f"T(0.5) * {{x}} * (T(1.0) + math.erf({{x}} * {lit(1.0 / math.sqrt(2.0))}))"


def _gelu_deriv(approximate=False):
    if approximate:
        t = f"math.tanh({lit(_SQRT_2_PI)} * ({{x}} + {lit(_GELU_C)} * {{x}} * {{x}} * {{x}}))"
        du = f"{lit(_SQRT_2_PI)} * (T(1.0) + {lit(3 * _GELU_C)} * {{x}} * {{x}})"
        return f"T(0.5) * (T(1.0) + {t}) + T(0.5) * {{x}} * (T(1.0) - {t} * {t}) * {du}"
    cdf = f"T(0.5) * (T(1.0) + math.erf({{x}} * {lit(1.0 / math.sqrt(2.0))}))"
    return f"{cdf} + {{x}} * {lit(1.0 / math.sqrt(2.0 * math.pi))} * math.exp(T(-0.5) * {{x}} * {{x}})"


def _gelu_second(a, approximate=False):
    if approximate:
        t = ew.tanh(_SQRT_2_PI * (a + _GELU_C * a * a * a))
        du, ddu = _SQRT_2_PI * (1 + 3 * _GELU_C * a * a), (6 * _SQRT_2_PI * _GELU_C) * a
        return (1 - t * t) * (du + 0.5 * a * (ddu - 2 * t * du * du))
    return ew.exp(-0.5 * a * a) * (1 / math.sqrt(2 * math.pi)) * (2 - a * a)


gelu_op = activation("gelu", _gelu_expr, _gelu_deriv, _gelu_second, defaults={"approximate": False})
leaky_relu_op = activation(
    "leaky_relu",
    lambda negative_slope: f"{{x}} if {{x}} >= T(0.0) else {{x}} * {lit(negative_slope)}",
    lambda negative_slope: f"T(1.0) if {{x}} >= T(0.0) else {lit(negative_slope)}",
    defaults={"negative_slope": 0.01},
    kinks=[0],
)


def exp_branch(a, factor, inverse_scale=1.0):
    """``factor * exp(a / inverse_scale)`` where ``a <= 0``, else 0: the second derivative of the
    exponential linear units (elu, selu, celu), with no overflow where ``a`` is large."""
    return _select(a > 0, 0.0, factor * ew.exp(ew.BINARY["minimum"](a, 0.0) / inverse_scale), a)


elu_op = activation(
    "elu",
    lambda alpha: f"{{x}} if {{x}} > T(0.0) else {lit(alpha)} * math.expm1({{x}})",
    lambda alpha: f"T(1.0) if {{x}} > T(0.0) else {lit(alpha)} * math.exp({{x}})",
    lambda a, alpha: exp_branch(a, alpha),
    defaults={"alpha": 1.0},
    kinks=[0],
)


def _softplus_second(a, beta, threshold):
    s = sigmoid_op(beta * a)
    return _select(a * beta > threshold, 0.0, beta * s * (1 - s), a)


softplus_op = activation(
    "softplus",
    lambda beta, threshold: _step(
        f"{{x}} * {lit(beta)} > {lit(threshold)}", "{x}", f"math.log1p(math.exp({{x}} * {lit(beta)})) / {lit(beta)}"
    ),
    lambda beta, threshold: _step(
        f"{{x}} * {lit(beta)} > {lit(threshold)}", "T(1.0)", sigmoid_expr(f"({{x}} * {lit(beta)})")
    ),
    _softplus_second,
    defaults={"beta": 1.0, "threshold": 20.0},
)
_MISH_TANH = "(T(1.0) if {x} > T(20.0) else T(1.0) - T(2.0) / (math.exp({x}) * (math.exp({x}) + T(2.0)) + T(2.0)))"
"""tanh(softplus(x)) with one exp: ``(n^2 + 2n) / (n^2 + 2n + 2)`` for ``n = e^x`` (1 past 20, as in
float tanh), so mish and its derivative cost one exp each instead of an exp, a log1p and a tanh."""


def _mish_second(a):
    t, s = ew.tanh(softplus_op(a)), sigmoid_op(a)
    return (1 - t * t) * s * (2 + a * (1 - s - 2 * t * s))


mish_op = activation(
    "mish",
    f"{{x}} * {_MISH_TANH}",
    f"{_MISH_TANH} + {{x}} * (T(1.0) - {_MISH_TANH} * {_MISH_TANH}) * {sigmoid_expr()}",
    _mish_second,
)
hardsigmoid_op = activation(
    "hardsigmoid",
    lambda slope, offset: f"min(max({{x}} * {lit(slope)} + {lit(offset)}, T(0.0)), T(1.0))",
    lambda slope, offset: _step("T(0.0) < {x} < T(1.0)", lit(slope)),
    of_output=True,
    defaults={"slope": 0.1666667, "offset": 0.5},
    kinks=[-3, 3],
)
hardswish_op = activation(
    "hardswish",
    "{x} * min(max({x} + T(3.0), T(0.0)), T(6.0)) / T(6.0)",
    _step("{x} <= T(-3.0)", "T(0.0)", _step("{x} < T(3.0)", "(T(2.0) * {x} + T(3.0)) / T(6.0)", "T(1.0)")),
    lambda a: _select((a > -3.0) & (a < 3.0), 1 / 3, 0.0, a),
    kinks=[-3, 3],
)

# ----- prelu: the slope is a learned input ---------------------------------------------------


def _prelu_shape(x_ndim: int, w_size: int, channel_axis: int) -> tuple:
    """The weight's shape to broadcast over x: one slope for all, or one per channel."""
    if w_size == 1:
        return ()
    shape = [1] * x_ndim
    shape[channel_axis] = w_size
    return tuple(shape)


def _prelu_forward(ctx, x, w, channel_axis=1):
    require_float("prelu", x)
    if w.size != 1 and (x.ndim <= channel_axis or x.shape[channel_axis] != w.size):
        channels = x.shape[channel_axis] if x.ndim > channel_axis else "none"
        raise ShapeError(
            f"prelu: weight has {w.size} slopes but the input (shape {list(x.shape)}) has {channels} channels "
            f"on axis {channel_axis}; use 1 slope or one per channel (check data_format)"
        )
    slope = w.reshape(_prelu_shape(x.ndim, w.size, channel_axis))
    return np.where(x > 0, x, x * slope).astype(x.dtype, copy=False)


def _prelu_vjp(ctx, g):
    x, w = ctx.input(0), ctx.input(1)
    positive = x > 0
    gx = gw = None
    if ctx.needs_input_grad[0]:
        gx = _select(
            positive, g, g * w.reshape(list(_prelu_shape(x.ndim, w.size, ctx.attrs.get("channel_axis", 1)))), x
        )
    if ctx.needs_input_grad[1]:
        shape = _prelu_shape(x.ndim, w.size, ctx.attrs.get("channel_axis", 1))
        gw = sum_to(_select(positive, 0.0, g * x, x), shape).reshape(list(w.shape))
    return gx, gw


def _prelu_samples(rng):
    x = _kink_free([0])(rng)[0].inputs[0].reshape(3, 2, 2)
    return [
        Sample((x, rng.uniform(0.1, 0.5, (2,))), {"channel_axis": 1}),
        Sample((x, rng.uniform(0.1, 0.5, (1,))), {"channel_axis": 1}),
    ]


prelu_op = OpDef("prelu", _prelu_forward, _prelu_vjp, same_as_first, OPAQUE, samples=_prelu_samples)

# ----- softmax family: fused row kernels ------------------------------------------------------


def _rows(x: np.ndarray, axis: int):
    """A contiguous [rows, n] array with ``axis`` last (a 0-d input is one row of one)."""
    y = np.moveaxis(x, axis, -1) if x.ndim and axis != x.ndim - 1 else x
    n = y.shape[-1] if y.ndim else 1
    return np.ascontiguousarray(y).reshape(math.prod(y.shape[:-1]), n)


def _unrows(flat: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    """Undo ``_rows`` for an array shaped like ``like``."""
    if not like.ndim or axis == like.ndim - 1:
        return flat.reshape(like.shape)
    return np.moveaxis(flat.reshape(np.moveaxis(like, axis, -1).shape), -1, axis)


def _row_kernel(name: str, kernel, *arrays, axis: int) -> np.ndarray:
    """``kernel`` over [rows, n] views of same-shape ``arrays`` with ``axis`` last, in float32 or
    float64 (half precision through float32), the result in the first array's shape and dtype."""
    x = arrays[0]
    require_float(name, x)
    ax = normalize_axis(name, axis, x.ndim)
    work = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    flat = [_rows(a.astype(work, copy=False), ax) for a in arrays]
    out = kernel(*flat) if flat[0].size else flat[0].copy()
    return _unrows(out, x, ax).astype(x.dtype, copy=False)


def _row_infer(name: str):
    def infer(x, *others, axis=-1):
        normalize_axis(name, axis, len(x.shape))
        return x

    return infer


def _row_samples(rng):
    return [Sample((rng.standard_normal((3, 4)),), {"axis": -1}), Sample((rng.standard_normal((3, 4)),), {"axis": 0})]


def _row_grad_samples(rng):
    return [Sample((rng.uniform(0.05, 0.5, (3, 4)), rng.standard_normal((3, 4))), {"axis": a}) for a in (-1, 0)]


def _softmax_grad_vjp(ctx, h):
    """``softmax_grad(y, g) = y * (g - sum(g * y))`` along the axis: its derivatives in ops
    (``d/dg`` is softmax_grad itself, ``d/dy = h * (g - sum(g y)) - g * sum(h y)``)."""
    y, g, ax = ctx.input(0), ctx.input(1), ctx.attrs.get("axis", -1)
    hy = (h * y).sum(axis=ax, keepdim=True)
    gy = ((h * (g - (g * y).sum(axis=ax, keepdim=True))) - g * hy) if ctx.needs_input_grad[0] else None
    return gy, softmax_grad_op(y, h, axis=ax) if ctx.needs_input_grad[1] else None


def _log_softmax_grad_vjp(ctx, h):
    """``log_softmax_grad(y, g) = g - exp(y) * sum(g)`` along the axis: ``d/dg = h - sum(h exp(y))``,
    ``d/dy = -h * exp(y) * sum(g)``."""
    y, g, ax = ctx.input(0), ctx.input(1), ctx.attrs.get("axis", -1)
    p = ew.exp(y)
    gy = -h * p * g.sum(axis=ax, keepdim=True) if ctx.needs_input_grad[0] else None
    gg = h - (h * p).sum(axis=ax, keepdim=True) if ctx.needs_input_grad[1] else None
    return gy, gg


def _row_record(name: str, kernel, vjp, samples) -> OpDef:
    """A softmax family op: ``kernel`` over rows along ``axis``, on ``x`` (forward) or ``(y, g)``
    (backward)."""
    return OpDef(
        name,
        lambda ctx, *arrays, axis=-1: _row_kernel(name, kernel, *arrays, axis=axis),
        vjp,
        _row_infer(name),
        OPAQUE,
        samples=samples,
        items=item_rules.off_axis("axis", -1),
    )


def _through(grad_op: OpDef):
    """The vjp of a forward row op: its backward op on the output and the incoming gradient."""
    return lambda ctx, g: grad_op(ctx.output(0), g, axis=ctx.attrs.get("axis", -1))


softmax_grad_op = _row_record("softmax_grad", K.softmax_bwd, _softmax_grad_vjp, _row_grad_samples)
log_softmax_grad_op = _row_record("log_softmax_grad", K.log_softmax_bwd, _log_softmax_grad_vjp, _row_grad_samples)
softmax_op = _row_record("softmax", K.softmax_fwd, _through(softmax_grad_op), _row_samples)
log_softmax_op = _row_record("log_softmax", K.log_softmax_fwd, _through(log_softmax_grad_op), _row_samples)

# ----- public functions ----------------------------------------------------------------------


def relu(x, name=None):
    return relu_op(x)


def relu6(x, name=None):
    return relu6_op(x)


def sigmoid(x, name=None):
    return sigmoid_op(x)


def silu(x, inplace=False, name=None):
    return silu_op(x)


def swish(x, name=None):
    """Paddle's swish is silu (beta fixed at 1)."""
    return silu_op(x)


def mish(x, name=None):
    return mish_op(x)


def gelu(x, approximate=False, name=None):
    """``approximate``: False/'none' is the exact erf form, True/'tanh' the tanh approximation."""
    if isinstance(approximate, str):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none', 'tanh' or a bool, got {approximate!r}")
        approximate = approximate == "tanh"
    return gelu_op(x, approximate=bool(approximate))


def leaky_relu(x, negative_slope=0.01, name=None):
    return leaky_relu_op(x, negative_slope=float(negative_slope))


def elu(x, alpha=1.0, name=None):
    return elu_op(x, alpha=float(alpha))


def softplus(x, beta=1, threshold=20, name=None):
    return softplus_op(x, beta=float(beta), threshold=float(threshold))


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    return hardsigmoid_op(x, slope=float(slope), offset=float(offset))


def hardswish(x, name=None):
    return hardswish_op(x)


def tanh(x, name=None):
    return ew.tanh(x)


def prelu(x, weight, data_format="NCHW", name=None):
    """One learned slope for all, or one per channel (channel axis 1, or last for channels-last)."""
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise ValueError(f"prelu: data_format must be NC/NCL/NCHW/NCDHW/NLC/NHWC/NDHWC, got {data_format!r}")
    channel_axis = 1 if data_format[1] == "C" else x.ndim - 1
    return prelu_op(x, weight, channel_axis=channel_axis)


def _cast_for(x, dtype):
    if dtype is None:
        return x
    return ew.cast(x, convert_dtype(dtype))


def softmax(x, axis=-1, dtype=None, name=None):
    """``exp(x) / sum(exp(x))`` along ``axis``; ``dtype`` casts the input first, as in Paddle."""
    return softmax_op(_cast_for(x, dtype), axis=int(axis))


def log_softmax(x, axis=-1, dtype=None, name=None):
    return log_softmax_op(_cast_for(x, dtype), axis=int(axis))


# ----- Paddle's bounded, shrinking and gated activations ---------------------------------------

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
    "relu", "relu6", "gelu", "silu", "swish", "sigmoid", "tanh", "hardswish", "hardsigmoid", "leaky_relu",
    "elu", "softplus", "mish", "prelu", "softmax", "log_softmax", "hardtanh", "selu", "celu", "softshrink",
    "hardshrink", "thresholded_relu", "tanhshrink", "softsign", "log_sigmoid", "logsigmoid", "glu",
]  # fmt: skip
TENSOR_METHODS = ["sigmoid", "softmax"]
