"""Indexing ops: gather/scatter families, masks, nonzero, along-axis ops and one_hot (Python
subscripts are ``ops/subscript.py``, sorting ``ops/sorting.py``).

Index tensors are op inputs (so tracing sees them) that never receive a gradient; gradients of
gathers are scatter-adds, so duplicate indices accumulate as in Paddle.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, normalize_axis
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..kernels.index import put_add_along, scatter_add_axis
from . import elementwise as ew
from ._util import constant, tensor_args, to_tensor_like
from .broadcast import sum_to
from .creation import zeros_like
from .elementwise import where_op
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
)
"""The transpose of ``masked_select``: ``g`` written into zeros at the mask's True entries."""


def _masked_select_vjp(ctx, g):
    x, mask = ctx.input(0), ctx.input(1)
    shape = broadcast_shapes("masked_select", tuple(x.shape), tuple(mask.shape))
    full = masked_select_grad_op(g, mask if tuple(mask.shape) == shape else expand(mask, list(shape)))
    return sum_to(full, x), None


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


# ----- one_hot -------------------------------------------------------------------------------


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


TENSOR_METHODS = [
    "gather", "gather_nd", "scatter", "scatter_nd_add", "index_select",
    "masked_fill", "masked_select", "nonzero", "take_along_axis", "put_along_axis",
]  # fmt: skip
FUNCTIONAL = ["one_hot"]


def where(condition, x=None, y=None, name=None):
    """Paddle's ``where``: elementwise selection, or with only ``condition`` the indices where it holds."""
    if x is None and y is None:
        return nonzero(condition, as_tuple=True)
    return ew.where(condition, x, y)
