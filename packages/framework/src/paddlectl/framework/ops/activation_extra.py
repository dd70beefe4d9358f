"""More activations for ``paddle.nn.functional``: hardtanh, selu, celu, softshrink, hardshrink,
thresholded_relu as ops with Paddle's kink conventions; tanhshrink, softsign, log_sigmoid and glu
as compositions."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import elementwise as ew
from .activation import activation, sigmoid, softplus
from .shape import split

hardtanh_op = activation(
    "hardtanh",
    lambda x, min=-1.0, max=1.0: np.clip(x, x.dtype.type(min), x.dtype.type(max)),  # noqa: A006
    lambda g, x, o, min=-1.0, max=1.0: g * ((x > min) & (x < max)),  # noqa: A006
)


def _selu(x, scale=1.0507009873554805, alpha=1.6732632423543772):
    return (scale * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))).astype(x.dtype, copy=False)


def _selu_grad(g, x, o, scale=1.0507009873554805, alpha=1.6732632423543772):
    return (g * np.where(x > 0, scale, scale * alpha * np.exp(np.minimum(x, 0)))).astype(x.dtype, copy=False)


selu_op = activation("selu", _selu, _selu_grad)


def _celu(x, alpha=1.0):
    return (np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(np.minimum(x, 0) / alpha))).astype(x.dtype, copy=False)


def _celu_grad(g, x, o, alpha=1.0):
    return (g * np.where(x > 0, 1, np.exp(np.minimum(x, 0) / alpha))).astype(x.dtype, copy=False)


celu_op = activation("celu", _celu, _celu_grad)
softshrink_op = activation(
    "softshrink",
    lambda x, threshold=0.5: np.where(x > threshold, x - threshold, np.where(x < -threshold, x + threshold, 0)).astype(
        x.dtype
    ),
    lambda g, x, o, threshold=0.5: g * ((x > threshold) | (x < -threshold)),
)
hardshrink_op = activation(
    "hardshrink",
    lambda x, threshold=0.5: np.where((x > threshold) | (x < -threshold), x, 0).astype(x.dtype),
    lambda g, x, o, threshold=0.5: g * ((x > threshold) | (x < -threshold)),
)
thresholded_relu_op = activation(
    "thresholded_relu",
    lambda x, threshold=1.0, value=0.0: np.where(x > threshold, x, value).astype(x.dtype),
    lambda g, x, o, threshold=1.0, value=0.0: g * (x > threshold),
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
