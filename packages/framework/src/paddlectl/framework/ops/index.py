"""Indexing ops: gather/scatter families, masks, nonzero, along-axis ops, sorting and top-k, one_hot,
and Tensor ``__getitem__``/``__setitem__``.

Index tensors are op inputs (so tracing sees them) that never receive a gradient; gradients of
gathers are scatter-adds, so duplicate indices accumulate as in Paddle.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, normalize_axis
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels.index import put_add_along, scatter_add_axis
from . import elementwise as ew
from ._util import constant, tensor_args, to_tensor_like
from .broadcast import sum_to
from .creation import zeros_like
from .elementwise import cast, where_op
from .inplace import rebind
from .shape import expand, reshape

INT = np.int64

NNZ = "nnz"
"""The symbolic size of a data-dependent dim (a mask's selected count)."""
_NNZ_EXEMPT = {"trace": "the output's size is the count of selected entries: no input's dims bind the symbol nnz"}


class IndexOutOfRangeError(ShapeError, IndexError):
    """An index past a dim's end; an IndexError too, so ``for row in tensor`` stops as in Python."""


def _as_index(op: str, index) -> Tensor:
    """An integer index argument as a Tensor (lists and arrays allowed)."""
    t = index if isinstance(index, Tensor) else constant(index)
    if t.dtype.kind not in "iu":
        raise DTypeError(f"{op}: index must be an integer tensor (int32/int64), got {t.dtype.name}")
    return t


def _check_bounds(op: str, index: np.ndarray, size: int, what: str) -> None:
    if index.size and (index.min() < -size or index.max() >= size):
        bad = index.min() if index.min() < -size else index.max()
        raise IndexOutOfRangeError(f"{op}: index {int(bad)} is out of range for {what} of size {size}")


def _scatter_add(shape: tuple, key, g: np.ndarray) -> np.ndarray:
    """The transpose of ``x[key]``: zeros of ``shape`` with ``g`` added at ``key`` (duplicates accumulate)."""
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


# ----- gather / index_select ------------------------------------------------------------------


def _grad_infer(g: Spec, like: Spec, *indices: Spec, **attrs) -> Spec:
    """A backward op's output: shaped as ``like`` (the primary op's input, read for its shape only, so
    a traced backward keeps its symbolic dims), in the gradient's dtype."""
    return Spec(tuple(like.shape), g.dtype)


def _gi(rng, g_shape, like_shape, index, **attrs) -> Sample:
    """A sample of a backward op: the gradient, the input it is shaped as, an integer index array."""
    return Sample((rng.standard_normal(g_shape), rng.standard_normal(like_shape), np.asarray(index, dtype=INT)), attrs)


def _xi(rng, x_shape, index, **attrs) -> Sample:
    """A sample of an op on one float64 input and one integer index array."""
    return Sample((rng.standard_normal(x_shape), np.asarray(index, dtype=INT)), attrs)


def _gather_forward(ctx, x, index, axis):
    _check_bounds("gather", index, x.shape[axis], f"axis {axis} of x{list(x.shape)}")
    return np.take(x, index, axis=axis)


def _gather_grad_forward(ctx, g, like, index, axis):
    if index.ndim == 0:
        g = np.expand_dims(g, axis)
    return scatter_add_axis(like.shape, axis, index, g)


gather_grad_op = OpDef(
    "gather_grad",
    _gather_grad_forward,
    lambda ctx, gg: (gather_op(gg, ctx.input(2), axis=ctx.attrs["axis"]), None, None),
    _grad_infer,
    OPAQUE,
    samples=lambda rng: [_gi(rng, (3, 2), (4, 2), [0, 2, 0], axis=0), _gi(rng, (2,), (2, 3), 1, axis=1)],
)
"""The transpose of ``gather``: ``g`` scatter-added into zeros of ``shape`` (the Numba kernel)."""


def _gather_vjp(ctx, g):
    return gather_grad_op(g, ctx.input(0), ctx.input(1), axis=ctx.attrs["axis"]), None


def _gather_infer(x: Spec, index: Spec, axis) -> Spec:
    return Spec(x.shape[:axis] + tuple(index.shape) + x.shape[axis + 1 :], x.dtype)


gather_op = OpDef(
    "gather",
    _gather_forward,
    _gather_vjp,
    _gather_infer,
    OPAQUE,
    samples=lambda rng: [_xi(rng, (4, 2), [0, 2, 0], axis=0), _xi(rng, (2, 3), 1, axis=1)],
)


def gather(x, index, axis=None, name=None, out=None):
    """Rows of ``x`` along ``axis`` (default 0); ``index`` is 1-D, 0-D, or [N, 1]."""
    axis = normalize_axis("gather", 0 if axis is None else int(axis), x.ndim)
    index = _as_index("gather", index)
    if index.ndim == 2 and index.shape[1] == 1:
        index = reshape(index, [-1])
    if index.ndim > 1:
        raise ShapeError(f"gather: index must be 1-D (or [N, 1]), got shape {index.shape} for x{x.shape}")
    return gather_op(x, index, axis=axis)


def index_select(x, index, axis=0, name=None, *, out=None):
    index = _as_index("index_select", index)
    if index.ndim != 1:
        raise ShapeError(f"index_select: index must be 1-D, got shape {index.shape}")
    return gather(x, index, axis)


# ----- gather_nd / scatter_nd_add -------------------------------------------------------------


def _nd_key(index: np.ndarray) -> tuple:
    return tuple(np.moveaxis(index, -1, 0))


def _check_nd_bounds(op: str, x: np.ndarray, index: np.ndarray) -> None:
    for k in range(index.shape[-1]):
        _check_bounds(op, index[..., k], x.shape[k], f"axis {k} of x{list(x.shape)}")


def _gather_nd_forward(ctx, x, index):
    _check_nd_bounds("gather_nd", x, index)
    return x[_nd_key(index)]


gather_nd_grad_op = OpDef(
    "gather_nd_grad",
    lambda ctx, g, like, index: _scatter_add(like.shape, _nd_key(index), g),
    lambda ctx, gg: (gather_nd_op(gg, ctx.input(2)), None, None),
    _grad_infer,
    OPAQUE,
    samples=lambda rng: [_gi(rng, (3, 2), (3, 2, 2), [[0, 1], [2, 0], [0, 1]])],
)
"""The transpose of ``gather_nd``: ``g`` added into zeros of ``shape`` at the index rows."""


def _gather_nd_infer(x: Spec, index: Spec) -> Spec:
    return Spec(tuple(index.shape[:-1]) + tuple(x.shape[index.shape[-1] :]), x.dtype)


_ND_INDEX = [[0, 1], [2, 0], [0, 1]]

gather_nd_op = OpDef(
    "gather_nd",
    _gather_nd_forward,
    lambda ctx, g: (gather_nd_grad_op(g, ctx.input(0), ctx.input(1)), None),
    _gather_nd_infer,
    OPAQUE,
    samples=lambda rng: [_xi(rng, (3, 2, 2), _ND_INDEX), _xi(rng, (3, 2), [[1, 1], [0, 0]])],
)


def _check_nd(op: str, x: Tensor, index: Tensor) -> None:
    if index.ndim == 0 or index.shape[-1] > x.ndim:
        raise ShapeError(f"{op}: index{index.shape} must end in a dim of at most x.ndim={x.ndim} (x{x.shape})")


def gather_nd(x, index, name=None):
    index = _as_index("gather_nd", index)
    _check_nd("gather_nd", x, index)
    return gather_nd_op(x, index)


def _scatter_nd_add_forward(ctx, x, index, updates):
    _check_nd_bounds("scatter_nd_add", x, index)
    out = x.copy()
    np.add.at(out, _nd_key(index), updates)
    return out


def _scatter_nd_add_vjp(ctx, g):
    return g, None, (gather_nd_op(g, ctx.input(1)) if ctx.needs_input_grad[2] else None)


def _scatter_nd_add_samples(rng):
    x, index = rng.standard_normal((3, 2, 2)), np.asarray(_ND_INDEX, dtype=INT)
    return [Sample((x, index, rng.standard_normal((3, 2))))]


scatter_nd_add_op = OpDef(
    "scatter_nd_add",
    _scatter_nd_add_forward,
    _scatter_nd_add_vjp,
    lambda x, index, updates: x,
    OPAQUE,
    samples=_scatter_nd_add_samples,
)


def scatter_nd_add(x, index, updates, name=None):
    index = _as_index("scatter_nd_add", index)
    _check_nd("scatter_nd_add", x, index)
    expected = index.shape[:-1] + x.shape[index.shape[-1] :]
    if updates.shape != expected:
        raise ShapeError(f"scatter_nd_add: updates{updates.shape} must have shape {expected} for index{index.shape}")
    return scatter_nd_add_op(x, index, updates)


# ----- scatter -------------------------------------------------------------------------------


def _scatter_forward(ctx, x, index, updates, overwrite):
    _check_bounds("scatter", index, x.shape[0], f"axis 0 of x{list(x.shape)}")
    out = x.copy()
    if overwrite:
        out[index] = updates  # later duplicates win, as in Paddle's CPU kernel
    else:
        out[index] = 0
        np.add.at(out, index, updates)
    return out


def _scatter_vjp(ctx, g):
    index, updates = ctx.input(1), ctx.input(2)
    gx = scatter_op(g, index, zeros_like(updates, g.dtype), overwrite=True) if ctx.needs_input_grad[0] else None
    # Paddle hands every update row its output row's gradient, duplicates included.
    return gx, None, (gather_op(g, index, axis=0) if ctx.needs_input_grad[2] else None)


def _scatter_samples(rng):
    index = np.asarray([2, 0], dtype=INT)
    return [
        Sample((rng.standard_normal((4, 3)), index, rng.standard_normal((2, 3))), {"overwrite": flag})
        for flag in (True, False)
    ]


scatter_op = OpDef(
    "scatter",
    _scatter_forward,
    _scatter_vjp,
    lambda x, index, updates, overwrite: x,
    OPAQUE,
    samples=_scatter_samples,
)


def scatter(x, index, updates, overwrite=True, name=None, out=None):
    index = _as_index("scatter", index)
    if index.ndim == 2 and index.shape[1] == 1:
        index = reshape(index, [-1])
    if index.ndim != 1 or updates.shape != index.shape + x.shape[1:]:
        raise ShapeError(
            f"scatter: index{index.shape} must be 1-D and updates{updates.shape} must be "
            f"{index.shape[:1] + x.shape[1:]} for x{x.shape}"
        )
    return scatter_op(x, index, updates.astype(x.dtype), overwrite=bool(overwrite))


# ----- masks and nonzero ---------------------------------------------------------------------


def _mask_tensor(op: str, mask) -> Tensor:
    mask = mask if isinstance(mask, Tensor) else constant(mask)
    if mask.dtype != np.bool_:
        raise DTypeError(f"{op}: mask must be a bool tensor, got {mask.dtype.name}")
    return mask


def masked_fill(x, mask, value, name=None):
    """``x`` with ``value`` where ``mask`` is True (broadcasting); gradients flow to x and a tensor value."""

    mask = mask if isinstance(mask, Tensor) else constant(mask)
    if mask.dtype != np.bool_:
        mask = mask.astype("bool")  # Paddle casts a non-bool mask
    broadcast_shapes("masked_fill", tuple(x.shape), tuple(mask.shape))
    value, x = tensor_args(value.astype(x.dtype) if isinstance(value, Tensor) else value, x)
    return where_op(mask, value, x)


def _masked_select_forward(ctx, x, mask):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


def _masked_select_grad_forward(ctx, g, mask):
    full = np.zeros(mask.shape, dtype=g.dtype)
    full[mask] = g
    return full


def _mask_samples(rng, first_shape, mask_shape):
    return [Sample((rng.standard_normal(first_shape), rng.random(mask_shape) < 0.5))]


masked_select_grad_op = OpDef(
    "masked_select_grad",
    _masked_select_grad_forward,
    lambda ctx, gg: (masked_select_op(gg, ctx.input(1)), None),
    lambda g, mask: Spec(tuple(mask.shape), g.dtype),
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal(3), np.array([[True, False], [True, True]])))],
    exempt={"trace": "g holds one entry per True of the mask: a data-dependent size no traced shape carries"},
)
"""The transpose of ``masked_select``: ``g`` written into zeros at the mask's True entries."""


def _masked_select_vjp(ctx, g):
    x, mask = ctx.input(0), ctx.input(1)
    shape = broadcast_shapes("masked_select", tuple(x.shape), tuple(mask.shape))
    full = masked_select_grad_op(g, mask if tuple(mask.shape) == shape else expand(mask, list(shape)))
    return sum_to(full, x.shape), None


masked_select_op = OpDef(
    "masked_select",
    _masked_select_forward,
    _masked_select_vjp,
    lambda x, mask: Spec((NNZ,), x.dtype),
    OPAQUE,
    samples=lambda rng: _mask_samples(rng, (3, 4), (3, 4)) + _mask_samples(rng, (4,), (3, 4)),
    exempt=_NNZ_EXEMPT,
)


def masked_select(x, mask, name=None, *, out=None):
    mask = _mask_tensor("masked_select", mask)
    broadcast_shapes("masked_select", tuple(x.shape), tuple(mask.shape))
    return masked_select_op(x, mask)


nonzero_op = OpDef(
    "nonzero",
    lambda ctx, x: np.argwhere(x).astype(np.int64),
    None,
    lambda x: Spec((NNZ, len(x.shape)), np.dtype(np.int64)),
    OPAQUE,
    samples=lambda rng: [Sample((rng.random((3, 4)) < 0.5,)), Sample((rng.integers(-1, 2, 5),))],
    exempt=_NNZ_EXEMPT,
)


def nonzero(x, as_tuple=False, *, out=None):
    """Coordinates of the non-zero entries: [N, ndim] int64, or a tuple of ndim [N] tensors."""
    coords = nonzero_op(x)
    if not as_tuple:
        return coords
    return tuple(coords[:, k] for k in range(x.ndim))


# ----- along-axis ops ------------------------------------------------------------------------


def _along_key(index: np.ndarray, axis: int) -> tuple:
    """The full NumPy index that ``take_along_axis(., index, axis)`` reads."""
    grids = list(np.ogrid[tuple(slice(n) for n in index.shape)]) if index.ndim else []
    grids[axis] = index
    return tuple(grids)


def _take_along_forward(ctx, arr, indices, axis):
    _check_bounds("take_along_axis", indices, arr.shape[axis], f"axis {axis} of arr{list(arr.shape)}")
    return np.take_along_axis(arr, indices, axis)


_ALONG_INDEX = [[0, 2], [1, 1], [3, 0]]

take_along_axis_grad_op = OpDef(
    "take_along_axis_grad",
    lambda ctx, g, like, indices, axis: put_add_along(like.shape, axis, indices, g),
    lambda ctx, gg: (take_along_axis_op(gg, ctx.input(2), axis=ctx.attrs["axis"]), None, None),
    _grad_infer,
    OPAQUE,
    samples=lambda rng: [_gi(rng, (3, 2), (3, 4), _ALONG_INDEX, axis=1)],
)
"""The transpose of ``take_along_axis`` (and of sort/topk's values): ``g`` added back at ``indices``."""


def _along_grad(ctx, g, indices: Tensor) -> Tensor:
    return take_along_axis_grad_op(g, ctx.input(0), indices, axis=ctx.attrs["axis"])


take_along_axis_op = OpDef(
    "take_along_axis",
    _take_along_forward,
    lambda ctx, g: (_along_grad(ctx, g, ctx.input(1)), None),
    lambda arr, indices, axis: Spec(tuple(indices.shape), arr.dtype),
    OPAQUE,
    samples=lambda rng: [_xi(rng, (3, 4), _ALONG_INDEX, axis=1), _xi(rng, (4, 2), [[3, 0]], axis=0)],
)


def _along_args(op: str, arr: Tensor, indices, axis: int):
    indices = _as_index(op, indices)
    if indices.ndim != arr.ndim:
        raise ShapeError(f"{op}: indices{indices.shape} and arr{arr.shape} must have the same number of dims")
    return indices, normalize_axis(op, int(axis), arr.ndim)


def take_along_axis(arr, indices, axis, broadcast=True, *, out=None):
    indices, axis = _along_args("take_along_axis", arr, indices, axis)
    if broadcast:
        shape = [0 if a == 0 or i == 0 else max(a, i) for a, i in zip(arr.shape, indices.shape, strict=True)]
        shape[axis] = indices.shape[axis]
        if shape != indices.shape:
            indices = expand(indices, shape)
        shape[axis] = arr.shape[axis]
        if shape != arr.shape:
            arr = expand(arr, shape)
    return take_along_axis_op(arr, indices, axis=axis)


_KERNEL_REDUCE = ("mul", "multiply", "mean", "amin", "amax")
"""The reductions whose gradient is a NumPy kernel (put_along_axis_grad) rather than ops."""
_PUT_REDUCE = {
    "assign": None, "add": np.add, "mul": np.multiply, "multiply": np.multiply, "mean": None,
    "amin": np.minimum, "amax": np.maximum,
}  # fmt: skip


def _put_forward(ctx, arr, indices, values, axis, reduce, include_self):
    _check_bounds("put_along_axis", indices, arr.shape[axis], f"axis {axis} of arr{list(arr.shape)}")
    key = _along_key(indices, axis)
    values = np.broadcast_to(values.astype(arr.dtype, copy=False), indices.shape)
    out = arr.copy()
    if reduce == "assign":
        out[key] = values
    elif reduce == "mean":
        counts = _scatter_add(arr.shape, key, np.ones(indices.shape, dtype=np.int64))
        if not include_self:
            out[key] = 0
        np.add.at(out, key, values)
        out = np.where(counts > 0, out / np.maximum(counts + include_self, 1), out).astype(arr.dtype, copy=False)
    else:
        ufunc = _PUT_REDUCE[reduce]
        if not include_self:
            out[key] = {np.add: 0, np.multiply: 1}.get(ufunc, values)
        ufunc.at(out, key, values)
    return out


def _put_vjp(ctx, g):
    """assign/add: gradients through ops; the other reductions: one NumPy backward kernel."""
    axis, reduce, include_self = ctx.attrs["axis"], ctx.attrs["reduce"], ctx.attrs["include_self"]
    indices = ctx.input(1)
    if reduce in _KERNEL_REDUCE:
        garr, gval = put_along_axis_grad_op(
            g, ctx.input(0), indices, ctx.input(2), ctx.output(0), axis=axis, reduce=reduce, include_self=include_self
        )
        return garr, None, gval
    garr = None
    if ctx.needs_input_grad[0]:
        zeros = zeros_like(indices, g.dtype)
        keep = reduce == "add" and include_self
        garr = g if keep else put_along_axis_op(g, indices, zeros, axis=axis, reduce="assign", include_self=True)
    return garr, None, take_along_axis_op(g, indices, axis=axis)


def _put_grad_sample(rng, sample: Sample) -> Sample:
    """put_along_axis_grad's inputs for one put_along_axis sample: (g, arr, indices, values, out)."""
    arr = sample.inputs[0]
    out = _put_forward(None, *sample.inputs, **sample.attrs)
    return Sample((rng.standard_normal(arr.shape), *sample.inputs, out), sample.attrs)


def _put_grad_forward(ctx, g, arr, indices, values, out, axis, reduce, include_self):
    key = _along_key(indices, axis)
    values = np.broadcast_to(values.astype(arr.dtype, copy=False), indices.shape)
    if reduce == "mean":
        denom = _scatter_add(arr.shape, key, np.ones(values.shape, dtype=g.dtype)) + include_self
        share = g / np.maximum(denom, 1)
        return np.where(denom > include_self, share * include_self, g), share[key]
    if reduce in ("amin", "amax"):
        return _put_extremum_vjp(g, key, arr, values, out, include_self)
    if include_self:
        products = np.ones(arr.shape, dtype=g.dtype)
        np.multiply.at(products, key, values)
        garr = g * products
    else:
        garr = g.copy()
        garr[key] = 0
    safe = np.where(values != 0, values, 1)
    return garr, g[key] * np.where(values != 0, out[key] / safe, 0)


def _put_extremum_vjp(g, key, arr, values, out, include_self):
    """Paddle splits the gradient evenly between every entry equal to the result; arr's own entry
    counts among them even with include_self=False (it then gets no share), so ties match Paddle."""
    written = np.zeros(arr.shape, dtype=bool)
    written[key] = True
    winners = values == out[key]
    self_ties = written & (arr == out)
    count = _scatter_add(arr.shape, key, winners.astype(g.dtype)) + self_ties
    share = g / np.maximum(count, 1)
    garr = np.where(written, np.where(self_ties, share, 0) if include_self else 0, g)
    return garr, np.where(winners, share[key], 0)


put_along_axis_grad_op = OpDef(
    "put_along_axis_grad",
    _put_grad_forward,
    None,
    lambda g, arr, indices, values, out, **attrs: (arr, Spec(tuple(indices.shape), arr.dtype)),
    OPAQUE,
    samples=lambda rng: [
        _put_grad_sample(rng, sample) for sample in _put_samples(rng) if sample.attrs["reduce"] in _KERNEL_REDUCE
    ],
)
"""The gradients of ``put_along_axis`` for mul/mean/amin/amax, to arr and values (no vjp of its own)."""


def _put_samples(rng):
    # distinct indices per row: where two values land on one entry, assign's gradient is Paddle's (each
    # value gets the entry's), not the last write's
    arr, index = rng.standard_normal((3, 4)), np.asarray([[0, 2], [1, 3], [3, 0]], dtype=INT)
    return [
        Sample((arr, index, rng.standard_normal((3, 2))), {"axis": 1, "reduce": reduce, "include_self": include})
        for reduce in ("assign", "add", "mul", "mean", "amin", "amax")
        for include in (True, False)
    ]


put_along_axis_op = OpDef(
    "put_along_axis",
    _put_forward,
    _put_vjp,
    lambda arr, indices, values, **attrs: arr,
    OPAQUE,
    samples=_put_samples,
    exempt={"vjp2": "mul/mean/amin/amax: the gradient is one NumPy kernel (put_along_axis_grad) with no vjp"},
)


def put_along_axis(arr, indices, values, axis, reduce="assign", include_self=True, broadcast=True):
    """Write ``values`` into ``arr`` at ``indices`` along ``axis``; reduce picks how (assign/add/mul/mean/amin/amax)."""
    if reduce not in _PUT_REDUCE:
        raise ValueError(f"put_along_axis: reduce must be one of {list(_PUT_REDUCE)}, got {reduce!r}")
    indices, axis = _along_args("put_along_axis", arr, indices, axis)
    values = to_tensor_like(values, arr)
    if broadcast:
        shape = list(arr.shape)
        shape[axis] = indices.shape[axis]
        if all(a >= i for a, i in zip(arr.shape, indices.shape, strict=True)):
            indices = expand(indices, shape)
    if values.shape != indices.shape:
        values = expand(values, indices.shape)
    return put_along_axis_op(arr, indices, values, axis=axis, reduce=reduce, include_self=bool(include_self))


# ----- sorting and top-k ---------------------------------------------------------------------


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sort order along ``axis``; descending keeps equal entries in their original order too."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(flipped, axis)


def _sort_forward(ctx, x, axis, descending):
    return np.take_along_axis(x, _order(x, axis, descending), axis)


def _sort_vjp(ctx, g):
    """The values are ``take_along_axis(x, order)``: their gradient goes back where each came from.
    The order is recomputed as an op (not saved), so a traced backward sorts the data it is given."""
    return _along_grad(ctx, g, argsort_op(ctx.input(0), **ctx.attrs))


def _sort_samples(rng):
    return [
        Sample((rng.standard_normal((3, 4)),), {"axis": 1, "descending": False}),
        Sample((rng.standard_normal((3, 4)),), {"axis": 0, "descending": True}),
    ]


sort_op = OpDef(
    "sort",
    _sort_forward,
    _sort_vjp,
    lambda x, axis, descending: x,
    OPAQUE,
    samples=_sort_samples,
)
argsort_op = OpDef(
    "argsort",
    lambda ctx, x, axis, descending: _order(x, axis, descending).astype(np.int64),
    None,
    lambda x, axis, descending: Spec(x.shape, np.dtype(np.int64)),
    OPAQUE,
    samples=_sort_samples,
)


def sort(x, axis=-1, descending=False, stable=False, name=None):
    """Sorted values along ``axis``; always stable (Paddle's CPU order for ties)."""
    return sort_op(x, axis=normalize_axis("sort", int(axis), x.ndim), descending=bool(descending))


def argsort(x, axis=-1, descending=False, stable=False, name=None):
    return argsort_op(x, axis=normalize_axis("argsort", int(axis), x.ndim), descending=bool(descending))


def _topk_order(x: np.ndarray, k: int, axis: int, largest: bool) -> np.ndarray:
    """The first ``k`` entries of the stable order, by partition then sorting only the ``k`` candidates
    (ties ordered by index) when ``k`` is small against the axis; a full sort otherwise."""
    n = x.shape[axis]
    if k == 0 or 4 * k >= n or x.dtype.kind not in "fi":
        return np.take(_order(x, axis, largest), np.arange(k), axis=axis)
    key = np.moveaxis(-x if largest else x, axis, -1)
    kth = np.partition(key, k - 1, axis=-1)[..., k - 1 : k]
    ties = key == kth  # of the entries equal to the k-th value, the lowest indices win, as in a stable sort
    need = k - np.sum(key < kth, axis=-1, keepdims=True)
    chosen = (key < kth) | (ties & (np.cumsum(ties, axis=-1) <= need))
    candidates = np.nonzero(chosen)[-1].reshape(key.shape[:-1] + (k,))
    ranked = np.lexsort((candidates, np.take_along_axis(key, candidates, -1)), axis=-1)
    return np.moveaxis(np.take_along_axis(candidates, ranked, -1), -1, axis)


def _topk_forward(ctx, x, k, axis, largest):
    order = _topk_order(x, k, axis, largest)
    return np.take_along_axis(x, order, axis), order.astype(np.int64)


def _topk_infer(x: Spec, k, axis, largest):
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1 :]
    return Spec(shape, x.dtype), Spec(shape, np.dtype(np.int64))


topk_op = OpDef(
    "topk",
    _topk_forward,
    lambda ctx, g, unused: _along_grad(ctx, g, ctx.output(1)),  # the indices output holds the order
    _topk_infer,
    OPAQUE,
    samples=lambda rng: (
        [Sample((rng.standard_normal((3, 20)),), {"k": 2, "axis": 1, "largest": largest}) for largest in (True, False)]
        + [Sample((rng.standard_normal((4, 3)),), {"k": 3, "axis": 0, "largest": True})]
    ),
)


def topk(x, k, axis=None, largest=True, sorted=True, name=None, *, out=None):  # noqa: A002 - Paddle's name
    """The ``k`` largest (or smallest) entries along ``axis`` (default -1) and their int64 indices."""
    axis = normalize_axis("topk", -1 if axis is None else int(axis), x.ndim)
    k = int(k.item()) if isinstance(k, Tensor) else int(k)
    size = x.shape[axis] if x.ndim else 1
    if not 0 <= k <= size:
        raise ShapeError(f"topk: k={k} must be in [0, {size}] for axis {axis} of x{x.shape}")
    return topk_op(x, k=k, axis=axis, largest=bool(largest))


def _one_hot_forward(ctx, x, num_classes):
    if x.size and (x.min() < 0 or x.max() >= num_classes):
        raise IndexOutOfRangeError(
            f"one_hot: labels must lie in [0, {num_classes}), got min {int(x.min())} max {int(x.max())}"
        )
    out = np.zeros(x.shape + (num_classes,), dtype=np.float32)
    np.put_along_axis(out, x[..., None].astype(np.intp), 1.0, axis=-1)
    return out


one_hot_op = OpDef(
    "one_hot",
    _one_hot_forward,
    None,
    lambda x, num_classes: Spec(tuple(x.shape) + (num_classes,), np.dtype(np.float32)),
    OPAQUE,
    samples=lambda rng: [Sample((rng.integers(0, 4, (2, 3)),), {"num_classes": 4})],
)


def one_hot(x, num_classes=-1, name=None):
    """``paddle.nn.functional.one_hot``: float32 rows with a 1 at each label."""
    x = _as_index("one_hot", x)
    num_classes = int(num_classes)
    if num_classes == -1:  # the class count from the labels: a data-dependent shape, eager only
        num_classes = int(x.max().item()) + 1 if x.size else 0
    return one_hot_op(x, num_classes=num_classes)


# ----- Tensor __getitem__ / __setitem__ ------------------------------------------------------
# An index is encoded as plain attrs (ints, slices as tuples, None, Ellipsis) plus tensor inputs
# for the array parts, so tracing records it like any op.


def _encode(op: str, x: Tensor, index) -> tuple[tuple, list[Tensor]]:
    items = index if isinstance(index, tuple) else (index,)
    spec, tensors = [], []
    for item in items:
        if item is None:
            spec.append(("none",))
        elif item is Ellipsis:
            spec.append(("ellipsis",))
        elif isinstance(item, slice):
            parts = tuple(None if p is None else int(p) for p in (item.start, item.stop, item.step))
            if parts[2] == 0:
                raise ShapeError(f"{op}: slice step cannot be zero (index {index!r} on x{x.shape})")
            spec.append(("slice",) + parts)
        elif isinstance(item, int | np.integer) and not isinstance(item, bool | np.bool_):
            spec.append(("int", int(item)))
        else:
            t = item if isinstance(item, Tensor) else constant(item)
            if t.size == 0 and t.dtype.kind == "f":
                t = t.astype("int64")  # x[[]] selects nothing
            if t.dtype.kind not in "biu":
                raise DTypeError(f"{op}: an index must be int, slice, None, ..., or an int/bool tensor; got {t.dtype}")
            spec.append(("tensor", len(tensors)))
            tensors.append(t)
    return tuple(spec), tensors


def _decode(spec: tuple, arrays) -> tuple:
    out = []
    for item in spec:
        kind = item[0]
        if kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        elif kind == "slice":
            out.append(slice(*item[1:]))
        elif kind == "int":
            out.append(item[1])
        else:
            out.append(arrays[item[1]])
    return tuple(out)


def _single_axis_index(spec: tuple, key: tuple) -> int | None:
    """The axis of ``x[:, ..., idx]`` (one 1-D int array after full slices), which has a fast kernel."""
    for axis, item in enumerate(spec):
        if item[0] == "tensor":
            index = key[axis]
            rest_full = all(s == ("slice", None, None, None) for s in spec[axis + 1 :])
            return axis if index.ndim == 1 and index.dtype.kind in "iu" and rest_full else None
        if item != ("slice", None, None, None):
            return None
    return None


def _is_basic(spec: tuple) -> bool:
    return all(item[0] != "tensor" for item in spec)


def _check_rank(op: str, x: Tensor, spec: tuple, tensors: list) -> None:
    dims = sum(1 for s in spec if s[0] in ("int", "slice"))
    dims += sum(tensors[s[1]].ndim if tensors[s[1]].dtype == np.bool_ else 1 for s in spec if s[0] == "tensor")
    if dims > x.ndim:
        raise IndexOutOfRangeError(f"{op}: too many indices for x{x.shape}: {dims} dims indexed, it has {x.ndim}")


def _indexed(op: str, x: Tensor, index, call):
    """Encode ``index``, run ``call(spec, tensors)``, and turn NumPy's index errors into typed ones."""
    spec, tensors = _encode(op, x, index)
    _check_rank(op, x, spec, tensors)
    try:
        return call(spec, tensors)
    except IndexError as exc:
        if isinstance(exc, IndexOutOfRangeError):
            raise
        raise IndexOutOfRangeError(f"{op}: {exc} (x{x.shape})") from None


def _getitem_forward(ctx, x, *arrays, spec):
    return np.asarray(x[_decode(spec, arrays)])


def _getitem_grad_forward(ctx, g, like, *arrays, spec):
    shape = like.shape
    key = _decode(spec, arrays)
    axis = _single_axis_index(spec, key)
    if _is_basic(spec):
        out = np.zeros(shape, dtype=g.dtype)
        out[key] = g
        return out
    if axis is not None:
        return scatter_add_axis(shape, axis, key[axis], g)
    return _scatter_add(shape, key, g)


def _index_inputs(ctx, first: int) -> list:
    """The index tensors an indexing op read after its ``first`` data inputs (constants)."""
    return [ctx.input(i) for i in range(first, len(ctx.needs_input_grad))]


def _getitem_grad_vjp(ctx, gg):
    indices = _index_inputs(ctx, 2)
    return (getitem_op(gg, *indices, spec=ctx.attrs["spec"]), None) + (None,) * len(indices)


# x[1:, ::-2], x[:, [2, 0, 2]] (the fast scatter kernel), x[[0, 2], None, 1] (np.add.at). Not x[mask]:
# the indexed region's size is the mask's count, which no traced shape carries (masked_select's
# record says so); tests/test_index_ops.py and test_shape_index_higher_order.py check masks.
_GETITEM_CASES = (
    ((4, 3), (("slice", 1, None, None), ("slice", None, None, -2)), ()),
    ((2, 3), (("slice", None, None, None), ("tensor", 0)), ([2, 0, 2],)),
    ((3, 2), (("tensor", 0), ("none",), ("int", 1)), ([0, 2, 0],)),
)


def _getitem_samples(rng, grad: bool = False):
    samples = []
    for shape, spec, indices in _GETITEM_CASES:
        x = rng.standard_normal(shape)
        arrays = tuple(np.asarray(i) for i in indices)
        if grad:
            samples.append(Sample((rng.standard_normal(x[_decode(spec, arrays)].shape), x, *arrays), {"spec": spec}))
        else:
            samples.append(Sample((x, *arrays), {"spec": spec}))
    return samples


getitem_grad_op = OpDef(
    "getitem_grad",
    _getitem_grad_forward,
    _getitem_grad_vjp,
    _grad_infer,
    OPAQUE,
    samples=lambda rng: _getitem_samples(rng, grad=True),
)
"""The transpose of ``getitem``: ``g`` added into zeros of ``shape`` at the index (duplicates accumulate)."""


def _getitem_vjp(ctx, g):
    indices = _index_inputs(ctx, 1)
    grad = getitem_grad_op(g, ctx.input(0), *indices, spec=ctx.attrs["spec"])
    return (grad,) + (None,) * len(indices)


class _Symbols:
    """Stand-in sizes for symbolic dims, so NumPy can compute an indexed shape; mapped back after."""

    BASE = 7919

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def concrete(self, shape) -> list[int]:
        return [d if isinstance(d, int) else self.size_of(d) for d in shape]

    def size_of(self, name: str) -> int:
        for size, known in self.names.items():
            if known == name:
                return size
        size = self.BASE + len(self.names)
        self.names[size] = name
        return size

    def restore(self, shape) -> tuple:
        return tuple(self.names.get(d, d) for d in shape)


def _spec_shape(x: Spec, indices: tuple, spec: tuple) -> tuple:
    """The indexed shape from specs: a boolean mask of rank m reads as m index arrays of ``nnz`` entries."""
    symbols = _Symbols()
    arrays = []
    for t in indices:
        if np.dtype(t.dtype) == np.bool_:
            arrays.append(("mask", len(t.shape)))
        else:
            arrays.append(np.zeros(symbols.concrete(t.shape), dtype=np.int64))
    key = []
    for item in _decode(spec, arrays):
        if isinstance(item, tuple) and item and item[0] == "mask":
            key += [np.zeros(symbols.size_of(NNZ), dtype=np.int64)] * item[1]
        else:
            key.append(item)
    dummy = np.broadcast_to(np.empty((), dtype=np.int8), symbols.concrete(x.shape))
    return symbols.restore(dummy[tuple(key)].shape)


def _getitem_infer(x: Spec, *indices: Spec, spec) -> Spec:
    return Spec(_spec_shape(x, indices, spec), x.dtype)


getitem_op = OpDef(
    "getitem",
    _getitem_forward,
    _getitem_vjp,
    _getitem_infer,
    OPAQUE,
    samples=_getitem_samples,
)


def __getitem__(self, index):  # noqa: N807 - installed as Tensor.__getitem__
    """NumPy/Paddle indexing: ints, slices (any step), None, ..., int and bool tensors, mixed."""
    return _indexed("getitem", self, index, lambda spec, tensors: getitem_op(self, *tensors, spec=spec))


def _setitem_forward(ctx, x, value, *arrays, spec):
    key = _decode(spec, arrays)
    out = x.copy()
    try:
        out[key] = value
    except ValueError:
        raise ShapeError(
            f"setitem: value{list(value.shape)} cannot be broadcast to the indexed region {list(out[key].shape)} "
            f"of x{list(x.shape)}"
        ) from None
    return out


def _last_write_forward(ctx, like, *arrays, spec):
    key = _decode(spec, arrays)
    last = np.full(like.shape, -1, dtype=np.int64)
    region = last[key].shape
    ids = np.arange(int(np.prod(region))).reshape(region)
    last[key] = ids
    return (last[key] == ids).astype(like.dtype)


last_write_op = OpDef(
    "last_write",
    _last_write_forward,
    None,
    lambda like, *indices, spec: Spec(_spec_shape(like, indices, spec), like.dtype),
    OPAQUE,
    samples=lambda rng: [Sample(s.inputs[1:], s.attrs) for s in _getitem_samples(rng, grad=True)],
)
"""Over the region ``like[index]``: 1 where that entry is the last write to its position, else 0
(an op on the index, so a traced backward recomputes it for the indices it is given)."""


def _setitem_vjp(ctx, g):
    spec = ctx.attrs["spec"]
    indices = _index_inputs(ctx, 2)
    gx = gv = None
    if ctx.needs_input_grad[0]:
        gx = set_value_op(g, constant(np.zeros((), dtype=g.dtype)), *indices, spec=spec)  # zero where written
    if ctx.needs_input_grad[1]:
        gv = getitem_op(g, *indices, spec=spec)
        if not _is_basic(spec):  # duplicate positions keep the last write: only its value gets the gradient
            gv = gv * last_write_op(g, *indices, spec=spec)
        value_shape = ctx.input(1).shape
        gv = sum_to(gv, value_shape) if gv.ndim >= len(value_shape) else reshape(gv, value_shape)
    return (gx, gv) + (None,) * len(indices)


def _set_value_samples(rng):
    samples = []
    for sample in _getitem_samples(rng):
        x, *indices = sample.inputs
        region = x[_decode(sample.attrs["spec"], indices)].shape
        value = rng.standard_normal((1, *region[1:]))  # broadcast over the region's first dim
        samples.append(Sample((x, value, *indices), sample.attrs))
    return samples


set_value_op = OpDef(
    "set_value",
    _setitem_forward,
    _setitem_vjp,
    lambda x, value, *indices, spec: x,
    OPAQUE,
    samples=_set_value_samples,
)


def __setitem__(self, index, value):  # noqa: N807 - installed as Tensor.__setitem__
    """``x[index] = value`` as a recorded op: x's data and graph node are rebound to the result, so
    gradients reach the old x (zero where written) and the value (summed to its shape)."""
    if STATE.grad_enabled and self._node is None and not self.stop_gradient:
        raise ValueError(
            f"setitem: {self.name or 'tensor'}{self.shape} is a leaf tensor that requires a gradient, and Paddle "
            "forbids in-place writes to it; write under paddle.no_grad(), or into a copy (x = x.clone())"
        )
    value = value if isinstance(value, Tensor) else constant(value, self.dtype)
    if value.dtype != self.dtype:
        value = cast(value, self.dtype)

    def write(before):
        return _indexed(
            "setitem", before, index, lambda spec, tensors: set_value_op(before, value, *tensors, spec=spec)
        )

    rebind(self, "setitem", write)


TENSOR_METHODS = [
    "__getitem__", "__setitem__", "gather", "gather_nd", "scatter", "scatter_nd_add", "index_select",
    "masked_fill", "masked_select", "nonzero", "take_along_axis", "put_along_axis", "topk", "sort", "argsort",
]  # fmt: skip
FUNCTIONAL = ["one_hot"]


def where(condition, x=None, y=None, name=None):
    """Paddle's ``where``: elementwise selection, or with only ``condition`` the indices where it holds."""
    if x is None and y is None:
        return nonzero(condition, as_tuple=True)
    return ew.where(condition, x, y)
