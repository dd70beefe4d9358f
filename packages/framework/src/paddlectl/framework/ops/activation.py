"""Activations and softmax: each an elementwise op with its own derivative (Paddle's conventions at
the kinks), multi-step ones as Numba ufuncs, softmax / log_softmax as fused row kernels."""

from __future__ import annotations

import math

import numpy as np

from ..core.dtype import convert_dtype
from ..core.op import ELEMENTWISE, OPAQUE, OpDef
from ..core.shapes import normalize_axis, same_as_first
from ..errors import DTypeError, ShapeError
from ..kernels import activation as K
from . import elementwise as ew


def require_float(op: str, x: np.ndarray) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: expected a floating-point tensor (float16/32/64), got {x.dtype}; cast it first")


def run_kernel(kernel, consts, *arrays: np.ndarray) -> np.ndarray:
    """Run a flat elementwise kernel (constants ``consts`` in the compute dtype) on same-shape arrays;
    half precision goes through float32 and back."""
    dtype = arrays[0].dtype
    work = dtype if dtype in (np.float32, np.float64) else np.dtype(np.float32)
    flat = [np.ascontiguousarray(a, dtype=work).reshape(-1) for a in arrays]
    out = kernel(*flat, np.asarray(consts, dtype=work))
    return out.reshape(arrays[0].shape).astype(dtype, copy=False)


def activation(name: str, fn, grad, *, save_input: bool = True) -> OpDef:
    """An elementwise activation: ``fn(x, **attrs)`` and ``grad(g, x, out, **attrs)`` (the input grad)."""

    def forward(ctx, x, **attrs):
        require_float(name, x)
        out = fn(x, **attrs)
        ctx.save(x if save_input else None, out)
        return out

    def vjp(ctx, g):
        x, out = ctx.saved
        return grad(g, x, out, **ctx.attrs)

    return OpDef(name, forward, vjp, same_as_first, ELEMENTWISE)


def _zero(x):
    return x.dtype.type(0)


def _mask_grad(g, mask):
    """``g`` where ``mask`` holds, else 0, as Paddle's ``dout * mask`` (np.where is ~15x slower here)."""
    return g * mask


relu_op = activation(
    "relu",
    lambda x: run_kernel(K.relu, K.UNIT_CONSTS, x),
    lambda g, x, o: run_kernel(K.relu_grad, K.UNIT_CONSTS, o, g),
    save_input=False,
)
relu6_op = activation(
    "relu6",
    lambda x: np.clip(x, _zero(x), x.dtype.type(6)),
    lambda g, x, o: _mask_grad(g, (x > 0) & (x < 6)),
)
sigmoid_op = activation(
    "sigmoid", lambda x: run_kernel(K.sigmoid, K.UNIT_CONSTS, x), lambda g, x, o: g * o * (1 - o), save_input=False
)
silu_op = activation(
    "silu", lambda x: run_kernel(K.silu, K.UNIT_CONSTS, x), lambda g, x, o: run_kernel(K.silu_grad, K.UNIT_CONSTS, x, g)
)
mish_op = activation(
    "mish", lambda x: run_kernel(K.mish, K.UNIT_CONSTS, x), lambda g, x, o: run_kernel(K.mish_grad, K.UNIT_CONSTS, x, g)
)


def _gelu(x, approximate=False):
    if approximate:
        return run_kernel(K.gelu_tanh, K.GELU_TANH_CONSTS, x)
    return run_kernel(K.gelu_erf, K.GELU_ERF_CONSTS, x)


def _gelu_grad(g, x, o, approximate=False):
    if approximate:
        return run_kernel(K.gelu_tanh_grad, K.GELU_TANH_CONSTS, x, g)
    return run_kernel(K.gelu_erf_grad, K.GELU_ERF_CONSTS, x, g)


gelu_op = activation("gelu", _gelu, _gelu_grad)


def _leaky(x, negative_slope=0.01):
    return np.where(x >= 0, x, x * x.dtype.type(negative_slope))


def _leaky_grad(g, x, o, negative_slope=0.01):
    return np.where(x >= 0, g, g * g.dtype.type(negative_slope))


leaky_relu_op = activation("leaky_relu", _leaky, _leaky_grad)


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, x.dtype.type(alpha) * np.expm1(np.minimum(x, _zero(x))))


def _elu_grad(g, x, o, alpha=1.0):
    return np.where(x > 0, g, g * (o + g.dtype.type(alpha)))


elu_op = activation("elu", _elu, _elu_grad)


def _softplus(x, beta=1.0, threshold=20.0):
    bx = x * x.dtype.type(beta)
    soft = np.logaddexp(_zero(x), np.minimum(bx, x.dtype.type(threshold))) / x.dtype.type(beta)
    return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


def _softplus_grad(g, x, o, beta=1.0, threshold=20.0):
    bx = x * x.dtype.type(beta)
    return np.where(bx > threshold, g, g * run_kernel(K.sigmoid, K.UNIT_CONSTS, bx))


softplus_op = activation("softplus", _softplus, _softplus_grad)


def _hardsigmoid(x, slope=0.1666667, offset=0.5):
    return np.clip(x * x.dtype.type(slope) + x.dtype.type(offset), _zero(x), x.dtype.type(1))


def _hardsigmoid_grad(g, x, o, slope=0.1666667, offset=0.5):
    return np.where((o > 0) & (o < 1), g * g.dtype.type(slope), _zero(g))


hardsigmoid_op = activation("hardsigmoid", _hardsigmoid, _hardsigmoid_grad, save_input=False)


def _hardswish(x):
    return x * np.clip(x + x.dtype.type(3), _zero(x), x.dtype.type(6)) / x.dtype.type(6)


def _hardswish_grad(g, x, o):
    inner = g * (2 * x + x.dtype.type(3)) / x.dtype.type(6)
    return np.where(x <= -3, _zero(g), np.where(x < 3, inner, g))


hardswish_op = activation("hardswish", _hardswish, _hardswish_grad)

# ----- prelu: the slope is a learned input ---------------------------------------------------


def _prelu_slope(x_ndim: int, w: np.ndarray, channel_axis: int) -> np.ndarray:
    """The weight shaped to broadcast over x: one slope for all, or one per channel."""
    if w.size == 1:
        return w.reshape(())
    shape = [1] * x_ndim
    shape[channel_axis] = w.size
    return w.reshape(shape)


def _prelu_forward(ctx, x, w, channel_axis=1):
    require_float("prelu", x)
    if w.size != 1 and (x.ndim <= channel_axis or x.shape[channel_axis] != w.size):
        channels = x.shape[channel_axis] if x.ndim > channel_axis else "none"
        raise ShapeError(
            f"prelu: weight has {w.size} slopes but the input (shape {list(x.shape)}) has {channels} channels "
            f"on axis {channel_axis}; use 1 slope or one per channel (check data_format)"
        )
    slope = _prelu_slope(x.ndim, w, channel_axis)
    ctx.save(x, slope, w.shape)
    return np.where(x > 0, x, x * slope).astype(x.dtype, copy=False)


def _prelu_vjp(ctx, g):
    x, slope, w_shape = ctx.saved
    positive = x > 0
    gx = np.where(positive, g, g * slope) if ctx.needs_input_grad[0] else None
    gw = None
    if ctx.needs_input_grad[1]:
        contrib = np.where(positive, _zero(g), g * x)
        if slope.ndim == 0:
            gw = np.asarray(contrib.sum(), dtype=g.dtype).reshape(w_shape)
        else:
            axes = tuple(i for i in range(x.ndim) if slope.shape[i] == 1)
            gw = contrib.sum(axis=axes).reshape(w_shape)
    return gx, gw


prelu_op = OpDef("prelu", _prelu_forward, _prelu_vjp, same_as_first, OPAQUE)

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


def _row_op(name: str, fwd_kernel, bwd_kernel) -> OpDef:
    def forward(ctx, x, axis=-1):
        require_float(name, x)
        ax = normalize_axis(name, axis, x.ndim)
        work = x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)
        flat = _rows(work, ax)
        out = fwd_kernel(flat) if flat.size else flat.copy()
        ctx.save(out, x, ax)
        return _unrows(out, x, ax).astype(x.dtype, copy=False)

    def vjp(ctx, g):
        out, x, ax = ctx.saved
        gflat = _rows(g.astype(out.dtype, copy=False), ax)
        dx = bwd_kernel(out, gflat) if out.size else gflat.copy()
        return _unrows(dx, x, ax).astype(x.dtype, copy=False)

    def infer(x, axis=-1):
        normalize_axis(name, axis, len(x.shape))
        return x

    return OpDef(name, forward, vjp, infer, OPAQUE)


softmax_op = _row_op("softmax", K.softmax_fwd, K.softmax_bwd)
log_softmax_op = _row_op("log_softmax", K.log_softmax_fwd, K.log_softmax_bwd)

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


FUNCTIONAL = [
    "relu", "relu6", "gelu", "silu", "swish", "sigmoid", "tanh", "hardswish", "hardsigmoid", "leaky_relu",
    "elu", "softplus", "mish", "prelu", "softmax", "log_softmax",
]  # fmt: skip
TENSOR_METHODS = ["sigmoid", "softmax"]
