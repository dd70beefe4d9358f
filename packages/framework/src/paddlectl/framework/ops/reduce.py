"""Reductions: sum, mean, extrema, products, statistics, logsumexp, cumulative sums."""

from __future__ import annotations

import builtins

import numpy as np

from ..core.op import REDUCE, OpDef, Spec
from ..core.shapes import normalize_axes, normalize_axis
from ..core.tensor import Tensor


def _reduced_shape(shape, axes, keepdim):
    axes = range(len(shape)) if axes is None else axes
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_infer(dtype_rule=None):
    def infer(x: Spec, axis=None, keepdim=False, **attrs) -> Spec:
        axes = normalize_axes("reduce", axis, len(x.shape))
        dtype = dtype_rule(x.dtype) if dtype_rule else x.dtype
        return Spec(_reduced_shape(x.shape, axes, keepdim), dtype)

    return infer


def _expand_back(g: np.ndarray, shape: tuple, axes, keepdim: bool) -> np.ndarray:
    """Give a reduced gradient its reduced axes back so it broadcasts over the input."""
    if not keepdim and axes is not None:
        g = np.expand_dims(g, axes)
    elif not keepdim:
        g = np.reshape(g, (1,) * len(shape))
    return g


def _sum_dtype(dtype):
    return np.dtype("int64") if dtype.kind in "biu" else dtype


def _sum_forward(ctx, x, axis=None, keepdim=False, dtype=None):
    ctx.save(x.shape, x.dtype)
    out_dtype = np.dtype(dtype) if dtype else _sum_dtype(x.dtype)
    return np.asarray(np.sum(x, axis=axis, keepdims=keepdim, dtype=out_dtype))


def _sum_vjp(ctx, g):
    shape, dtype = ctx.saved
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    return np.broadcast_to(_expand_back(g, shape, axis, keepdim), shape).astype(dtype, copy=False)


sum_op = OpDef("sum", _sum_forward, _sum_vjp, _reduce_infer(_sum_dtype), REDUCE)


def _mean_forward(ctx, x, axis=None, keepdim=False):
    ctx.save(x.shape)
    return np.asarray(np.mean(x, axis=axis, keepdims=keepdim, dtype=x.dtype))


def _mean_vjp(ctx, g):
    (shape,) = ctx.saved
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    count = np.prod([shape[a] for a in axis]) if axis is not None else np.prod(shape)
    return np.broadcast_to(_expand_back(g, shape, axis, keepdim) / g.dtype.type(builtins.max(count, 1)), shape)


mean_op = OpDef("mean", _mean_forward, _mean_vjp, _reduce_infer(), REDUCE)


def _extremum(name: str, fn):
    def forward(ctx, x, axis=None, keepdim=False):
        out = np.asarray(fn(x, axis=axis, keepdims=True))
        ctx.save(x, out)
        return out if keepdim else (out.reshape(()) if axis is None else np.squeeze(out, axis=axis))

    def vjp(ctx, g):
        x, out = ctx.saved
        axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
        # Paddle gives the full gradient to every element equal to the extremum.
        return _expand_back(g, x.shape, axis, keepdim) * (x == out)

    return OpDef(name, forward, vjp, _reduce_infer(), REDUCE)


max_op = _extremum("max", np.max)
min_op = _extremum("min", np.min)


def _prod_forward(ctx, x, axis=None, keepdim=False):
    out = np.asarray(np.prod(x, axis=axis, keepdims=keepdim))
    ctx.save(x, out)
    return out


def _prod_vjp(ctx, g):
    x, out = ctx.saved
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    full = _expand_back(g * out, x.shape, axis, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = full / x
    if np.any(x == 0):
        # d prod / d x_i = prod of the others: recompute where a zero makes out/x undefined.
        zeros = x == 0
        others = np.where(zeros, 1, x)
        keep = np.prod(others, axis=axis, keepdims=True)
        n_zero = np.sum(zeros, axis=axis, keepdims=True)
        g_full = _expand_back(g, x.shape, axis, keepdim)
        grad = np.where(zeros, np.where(n_zero == 1, g_full * keep, 0), grad)
    return grad


prod_op = OpDef("prod", _prod_forward, _prod_vjp, _reduce_infer(), REDUCE)


def _var_forward(ctx, x, axis=None, keepdim=False, unbiased=True):
    mean = np.mean(x, axis=axis, keepdims=True)
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    ddof = 1 if unbiased else 0
    centered = x - mean
    out = np.asarray(np.sum(centered * centered, axis=axis, keepdims=keepdim) / x.dtype.type(builtins.max(n - ddof, 1)))
    ctx.save(centered, n - ddof)
    return out.astype(x.dtype, copy=False)


def _var_vjp(ctx, g):
    centered, denom = ctx.saved
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    return _expand_back(g, centered.shape, axis, keepdim) * centered * centered.dtype.type(2 / builtins.max(denom, 1))


var_op = OpDef("var", _var_forward, _var_vjp, _reduce_infer(), REDUCE)


def _logsumexp_forward(ctx, x, axis=None, keepdim=False):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    s = np.sum(np.exp(x - m), axis=axis, keepdims=True)
    out_k = np.log(s) + m
    ctx.save(x, out_k)
    out = out_k if keepdim else (out_k.reshape(()) if axis is None else np.squeeze(out_k, axis=axis))
    return out.astype(x.dtype, copy=False)


def _logsumexp_vjp(ctx, g):
    x, out_k = ctx.saved
    axis, keepdim = ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    return _expand_back(g, x.shape, axis, keepdim) * np.exp(x - out_k)


logsumexp_op = OpDef("logsumexp", _logsumexp_forward, _logsumexp_vjp, _reduce_infer(), REDUCE)


def _arg_infer(x: Spec, axis=None, keepdim=False, dtype="int64") -> Spec:
    axes = None if axis is None else (axis,)
    return Spec(_reduced_shape(x.shape, axes, keepdim), np.dtype(dtype))


def _argext(name: str, fn):
    def forward(ctx, x, axis=None, keepdim=False, dtype="int64"):
        if axis is None:
            out = np.asarray(fn(x.reshape(-1)))
            return out.reshape((1,) * x.ndim if keepdim else ()).astype(dtype)
        return fn(x, axis=axis, keepdims=keepdim).astype(dtype)

    return OpDef(name, forward, None, _arg_infer, REDUCE)


argmax_op = _argext("argmax", np.argmax)
argmin_op = _argext("argmin", np.argmin)


def _cumsum_forward(ctx, x, axis):
    return np.cumsum(x, axis=axis, dtype=_sum_dtype(x.dtype) if x.dtype.kind in "biu" else x.dtype)


def _cumsum_vjp(ctx, g):
    axis = ctx.attrs["axis"]
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


cumsum_op = OpDef("cumsum", _cumsum_forward, _cumsum_vjp, lambda x, axis: Spec(x.shape, x.dtype), "opaque")

all_op = OpDef(
    "all", lambda ctx, x, axis=None, keepdim=False: np.asarray(np.all(x, axis=axis, keepdims=keepdim)),
    None, _reduce_infer(lambda d: np.dtype(bool)), REDUCE,
)  # fmt: skip
any_op = OpDef(
    "any", lambda ctx, x, axis=None, keepdim=False: np.asarray(np.any(x, axis=axis, keepdims=keepdim)),
    None, _reduce_infer(lambda d: np.dtype(bool)), REDUCE,
)  # fmt: skip

# ----- public functions ----------------------------------------------------------------------


def _axes(name: str, x: Tensor, axis):
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    return normalize_axes(name, axis, x.ndim)


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001
    from ..core.dtype import convert_dtype

    return sum_op(x, axis=_axes("sum", x, axis), keepdim=keepdim, dtype=convert_dtype(dtype).name if dtype else None)


def mean(x, axis=None, keepdim=False, name=None):
    return mean_op(x, axis=_axes("mean", x, axis), keepdim=keepdim)


def max(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return max_op(x, axis=_axes("max", x, axis), keepdim=keepdim)


def min(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return min_op(x, axis=_axes("min", x, axis), keepdim=keepdim)


amax, amin = max, min


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    out = prod_op(x, axis=_axes("prod", x, axis), keepdim=keepdim)
    return out.astype(dtype) if dtype else out


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    return var_op(x, axis=_axes("var", x, axis), keepdim=keepdim, unbiased=unbiased)


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    from .elementwise import sqrt

    return sqrt(var(x, axis, unbiased, keepdim))


def logsumexp(x, axis=None, keepdim=False, name=None):
    return logsumexp_op(x, axis=_axes("logsumexp", x, axis), keepdim=keepdim)


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None):
    if axis is not None:
        axis = normalize_axis("argmax", int(axis), x.ndim)
    return argmax_op(x, axis=axis, keepdim=keepdim, dtype=str(np.dtype(dtype)))


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None):
    if axis is not None:
        axis = normalize_axis("argmin", int(axis), x.ndim)
    return argmin_op(x, axis=axis, keepdim=keepdim, dtype=str(np.dtype(dtype)))


def cumsum(x, axis=None, dtype=None, name=None):
    if axis is None:
        from .shape import flatten

        x, axis = flatten(x), 0
    out = cumsum_op(x, axis=normalize_axis("cumsum", int(axis), x.ndim))
    return out.astype(dtype) if dtype else out


def all(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return all_op(x, axis=_axes("all", x, axis), keepdim=keepdim)


def any(x, axis=None, keepdim=False, name=None):  # noqa: A001
    return any_op(x, axis=_axes("any", x, axis), keepdim=keepdim)


TENSOR_METHODS = [
    "sum", "mean", "max", "min", "amax", "amin", "prod", "var", "std", "logsumexp", "argmax", "argmin", "cumsum",
    "all", "any",
]  # fmt: skip
