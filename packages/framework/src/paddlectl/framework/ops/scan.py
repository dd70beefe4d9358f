"""Products and scans along axes: ``prod``, ``cumsum`` and ``cumprod`` as ops, ``logcumsumexp``
and the n-th forward difference as compositions. ``prod``'s vjp at zero entries is a prefix times
a suffix ``cumprod``, so it differentiates again there too."""

from __future__ import annotations

import numpy as np

from ..core import items as item_rules
from ..core.op import OPAQUE, REDUCE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..core.state import STATE
from ..core.tensor import Tensor
from . import elementwise as ew
from . import reduce
from ._util import constant
from .reduce import UNFUSED, expand_back, reduce_axes, reduce_infer, sum_dtype
from .shape import concat, flatten, flip, reshape, split, transpose


def _prod_forward(ctx, x, axis=None, keepdim=False):
    return np.asarray(np.prod(x, axis=axis, keepdims=keepdim))


def _product_of_others(x: Tensor, axis) -> Tensor:
    """For each entry, the product of the other entries reduced with it, as a prefix product times a
    suffix product (cumprod ops, no division): exact where entries are zero, and differentiable."""
    axes = list(range(x.ndim)) if axis is None else list(axis)
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = transpose(x, rest + axes)
    lead = [x.shape[a] for a in rest]
    n = int(np.prod([x.shape[a] for a in axes]))
    flat = reshape(moved, [*lead, n])
    ones = constant(np.ones([*lead, 1], x.dtype))
    before = split(cumprod_op(concat([ones, flat], -1), axis=len(lead)), [n, 1], -1)[0]
    after = flip(cumprod_op(flip(concat([flat, ones], -1), [-1]), axis=len(lead)), [-1])
    others = reshape(before * split(after, [1, n], -1)[1], moved.shape)
    return transpose(others, [int(p) for p in np.argsort(rest + axes)])


def _prod_vjp(ctx, g):
    """d prod / d x_i is the product of the other entries (not ``out / x_i``, undefined at zeros)."""
    x, axis = ctx.input(0), ctx.attrs.get("axis")
    return expand_back(g, x.shape, axis, ctx.attrs.get("keepdim", False)) * _product_of_others(x, axis)


def _prod_samples(rng):
    one_zero, two_zeros = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (3, 4))
    one_zero[1, 2] = two_zeros[0, 1] = two_zeros[0, 3] = 0.0
    return [
        Sample((rng.uniform(0.5, 2.0, (3, 4)),), {"axis": None, "keepdim": False}),
        Sample((one_zero,), {"axis": (1,), "keepdim": False}),
        Sample((two_zeros,), {"axis": (1,), "keepdim": True}),
        Sample((two_zeros,), {"axis": None, "keepdim": False}),
    ]


prod_op = OpDef("prod", _prod_forward, _prod_vjp, reduce_infer(), REDUCE, samples=_prod_samples, exempt=UNFUSED)


def _cumsum_forward(ctx, x, axis):
    return np.cumsum(x, axis=axis, dtype=sum_dtype(x.dtype) if x.dtype.kind in "biu" else x.dtype)


def _cumsum_vjp(ctx, g):
    """Each input feeds every later output: the gradient is the reversed cumulative sum."""
    axis = (ctx.attrs["axis"],)
    return flip(cumsum_op(flip(g, axis), axis=axis[0]), axis)


cumsum_op = OpDef(
    "cumsum",
    _cumsum_forward,
    _cumsum_vjp,
    lambda x, axis: Spec(x.shape, x.dtype),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((3, 4)),), {"axis": a}) for a in (0, 1)],
    items=item_rules.off_axis("axis"),
)


def _cumprod_forward(ctx, x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _reverse_cumsum(t, axis: int):
    return flip(cumsum_op(flip(t, [axis]), axis=axis), [axis])


def _along(axis: int, ndim: int, values: np.ndarray) -> np.ndarray:
    """A 1-D array laid along ``axis`` of an ``ndim``-D shape, to broadcast against it."""
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)


def _cumprod_vjp(ctx, g):
    """``sum_{j >= i} g_j out_j / x_i`` without zeros; with one, ``d out_j / d x_i`` is the
    cumulative product with ``x_i`` replaced by 1, taken one position ``i`` at a time. A traced
    gradient always takes the zero-safe form: the program must hold for inputs with zeros too."""
    x, axis = ctx.input(0), ctx.attrs["axis"]
    if STATE.tracer is None and not (x._data == 0).any():
        return _reverse_cumsum(g * ew.conj_if_complex(ctx.output(0)), axis) / ew.conj_if_complex(x)
    n, positions = x.shape[axis], np.arange(x.shape[axis])
    columns = []
    for i in range(n):
        at_i = constant(_along(axis, x.ndim, positions == i), x.dtype)
        partial = cumprod_op(x * (1 - at_i) + at_i, axis=axis)
        later = constant(_along(axis, x.ndim, positions >= i), x.dtype)
        columns.append(reduce.sum(g * ew.conj_if_complex(partial * later), axis, keepdim=True))
    return concat(columns, axis)


def _cumprod_samples(rng):
    with_zero = rng.uniform(0.5, 2.0, (3, 4))
    with_zero[1, 2] = 0.0
    return [
        Sample((rng.uniform(0.5, 2.0, (3, 4)),), {"axis": 1}),
        Sample((rng.uniform(-2.0, 2.0, (3, 4)),), {"axis": 0}),
        Sample((with_zero,), {"axis": 1}),
    ]


cumprod_op = OpDef(
    "cumprod",
    _cumprod_forward,
    _cumprod_vjp,
    lambda x, axis: x,
    OPAQUE,
    samples=_cumprod_samples,
)


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    out = prod_op(x, axis=reduce_axes("prod", x, axis), keepdim=keepdim)
    return out.astype(dtype) if dtype else out


def cumsum(x, axis=None, dtype=None, name=None):
    if axis is None:
        x, axis = flatten(x), 0
    out = cumsum_op(x, axis=normalize_axis("cumsum", int(axis), x.ndim))
    return out.astype(dtype) if dtype else out


def cumprod(x, dim=None, *, dtype=None, out=None, name=None):
    if dtype is not None:
        x = x.astype(dtype)
    if dim is None:
        x, dim = flatten(x), 0
    return cumprod_op(x, axis=normalize_axis("cumprod", int(dim), x.ndim))


def diff(x, n=1, axis=-1, prepend=None, append=None, name=None, *, out=None):
    """``n``-th forward difference along ``axis``, after concatenating ``prepend``/``append``."""
    axis = normalize_axis("diff", int(axis), x.ndim)
    if prepend is not None or append is not None:
        x = concat([t for t in (prepend, x, append) if t is not None], axis)
    for _ in range(int(n)):
        lo = [slice(None)] * x.ndim
        hi = [slice(None)] * x.ndim
        lo[axis], hi[axis] = slice(None, -1), slice(1, None)
        x = ew.BINARY["not_equal"](x[tuple(hi)], x[tuple(lo)]) if x.dtype == np.bool_ else x[tuple(hi)] - x[tuple(lo)]
    return x


def logcumsumexp(x, axis=None, dtype=None, name=None):
    """``log(cumsum(exp(x)))`` along ``axis`` (flattened when None), shifted by the max for stability."""
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis("logcumsumexp", int(axis), x.ndim)
    if x.size:
        shift = reduce.max(x, axis, keepdim=True).detach()
        shift = ew.where(ew.UNARY["isfinite"](shift), shift, constant(0, x.dtype))
    else:
        shift = constant(0, x.dtype)
    return ew.UNARY["log"](cumsum(ew.UNARY["exp"](x - shift), axis)) + shift


TENSOR_METHODS = ["prod", "cumsum", "cumprod", "logcumsumexp", "diff"]
TOP_LEVEL = TENSOR_METHODS
