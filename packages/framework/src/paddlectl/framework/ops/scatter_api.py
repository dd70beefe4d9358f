"""Paddle's scatter family beyond ``scatter``/``put_along_axis``: scatter_reduce, scatter_add,
scatter_nd, index_put, select/slice/diagonal/masked_scatter, index_sample, multiplex, shard_index.

All are compositions of the index ops (put_along_axis, scatter_nd_add, gather_nd, scatter,
take_along_axis), so their gradients are those ops'. The "embed" functions (select/slice/
diagonal/masked_scatter) write ``values`` over ``x`` at flat positions computed from the shapes
(or the mask) with ``scatter`` on the flattened tensor: ``x`` gets no gradient where it was
overwritten, ``values`` gets the output's gradient there."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from . import elementwise as ew
from . import inplace
from ._util import constant
from .creation import zeros
from .index import gather_nd, put_along_axis, scatter, scatter_nd_add, take_along_axis, where
from .shape import broadcast_to, reshape, stack

_SCATTER_REDUCE = {"sum": "add", "prod": "mul", "mean": "mean", "amin": "amin", "amax": "amax"}


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002 - Paddle's names
    """``paddle.scatter_reduce``: reduce ``src`` into ``input`` at ``index`` along ``dim``."""
    if reduce not in _SCATTER_REDUCE:
        raise ConfigError(f"scatter_reduce: reduce must be one of {list(_SCATTER_REDUCE)}, got {reduce!r}")
    return put_along_axis(input, index, src, dim, _SCATTER_REDUCE[reduce], include_self, broadcast=False)


def scatter_add(input, dim, index, src):  # noqa: A002
    """``paddle.scatter_add``: ``input[..., index, ...] += src`` along ``dim``."""
    return put_along_axis(input, index, src, dim, "add", broadcast=False)


def scatter_nd(index, updates, shape, name=None):
    """``paddle.scatter_nd``: ``updates`` summed into zeros of ``shape`` at the n-d ``index``."""
    return scatter_nd_add(zeros(shape, updates.dtype), index, updates)


def index_put(x, indices, value, accumulate=False, name=None):
    """``paddle.index_put``: ``x[indices] = value`` (``+=`` when ``accumulate``), out of place."""
    indices = list(indices)
    if len(indices) == 1 and indices[0].dtype == np.bool_:
        indices = [constant(i) for i in np.nonzero(indices[0].numpy())]
    if not indices or len(indices) > x.ndim:
        raise ShapeError(f"index_put: give 1 to {x.ndim} index tensors for x{x.shape}, got {len(indices)}")
    shape = np.broadcast_shapes(*[tuple(i.shape) for i in indices])
    index = stack([broadcast_to(ew.cast(i, "int64"), list(shape)) for i in indices], -1)
    value = value if isinstance(value, Tensor) else constant(np.asarray(value, dtype=x.dtype))
    value = broadcast_to(ew.cast(value, x.dtype), [*shape, *x.shape[len(indices) :]])
    if not accumulate:
        x = scatter_nd_add(x, index, -gather_nd(x, index))
    return scatter_nd_add(x, index, value)


def _embed(op: str, x, positions: np.ndarray, values) -> Tensor:
    """``x`` with the flat ``positions`` replaced by ``values`` (broadcast to their shape)."""
    if tuple(values.shape) != positions.shape:
        try:
            np.broadcast_shapes(tuple(values.shape), positions.shape)
        except ValueError:
            raise ShapeError(
                f"{op}: values{values.shape} do not broadcast to the {list(positions.shape)} to fill"
            ) from None
        values = broadcast_to(values, list(positions.shape))
    flat = reshape(x, [-1, 1])
    updates = reshape(ew.cast(values, x.dtype), [-1, 1])
    return reshape(scatter(flat, constant(positions.reshape(-1).astype(np.int64)), updates), x.shape)


def _grid(x) -> np.ndarray:
    return np.arange(int(np.prod(x.shape)), dtype=np.int64).reshape(x.shape)


def select_scatter(x, values, axis, index, name=None):
    """``paddle.select_scatter``: ``x`` with the slice ``index`` of ``axis`` replaced by ``values``."""
    return _embed("select_scatter", x, np.take(_grid(x), index, axis=axis), values)


def slice_scatter(x, value, axes, starts, ends, strides, name=None):
    """``paddle.slice_scatter``: ``x`` with ``x[starts:ends:strides]`` (on ``axes``) replaced by ``value``."""
    where_ = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, strides, strict=True):
        where_[axis] = slice(int(start), int(end), int(step))
    return _embed("slice_scatter", x, _grid(x)[tuple(where_)], value)


def diagonal_scatter(x, y, offset=0, axis1=0, axis2=1, name=None):
    """``paddle.diagonal_scatter``: ``x`` with its ``offset`` diagonal (of ``axis1``/``axis2``) replaced by ``y``."""
    return _embed("diagonal_scatter", x, np.diagonal(_grid(x), offset, axis1, axis2), y)


def fill_diagonal_tensor(x, y, offset=0, dim1=0, dim2=1, name=None):
    """``Tensor.fill_diagonal_tensor``: ``diagonal_scatter`` under Paddle's method name."""
    return diagonal_scatter(x, y, offset, dim1, dim2)


def fill_diagonal_tensor_(x, y, offset=0, dim1=0, dim2=1, name=None):
    """``Tensor.fill_diagonal_tensor_``: the same, in place."""
    return inplace.rebind(x, "fill_diagonal_tensor_", lambda a: diagonal_scatter(a, y, offset, dim1, dim2))


def fill_diagonal_(x, value, offset=0, wrap=False, name=None):
    """``Tensor.fill_diagonal_``: ``x[i, i + offset] = value`` in place (every dim equal beyond 2-D;
    ``wrap`` restarts the diagonal below a tall matrix's first square, as NumPy's)."""
    mask = np.zeros(x.shape, dtype=bool)
    if x.ndim == 2:
        np.fill_diagonal(mask[:, offset:] if offset >= 0 else mask[-offset:], True, wrap=bool(wrap))
    elif x.ndim > 2 and len(set(x.shape)) == 1 and offset == 0:
        np.fill_diagonal(mask, True)
    else:
        raise ShapeError(f"fill_diagonal_: x must be 2-D, or have all dims equal (offset 0), got x{x.shape}")
    fill = constant(np.asarray(value, dtype=x.dtype))
    return inplace.rebind(x, "fill_diagonal_", lambda a: where(constant(mask), fill, a))


def masked_scatter(x, mask, value, name=None):
    """``paddle.masked_scatter``: the positions where ``mask`` (broadcast to x) is True take the
    leading entries of ``value``, in row-major order."""
    if mask.dtype != np.bool_:
        raise DTypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype}")
    full = np.broadcast_to(mask.numpy(), x.shape)
    positions = _grid(x)[full]
    if value.size < positions.size:
        raise ShapeError(f"masked_scatter: mask selects {positions.size} entries but value has only {value.size}")
    return _embed("masked_scatter", x, positions, reshape(value, [-1])[: positions.size])


def index_sample(x, index):
    """``paddle.index_sample``: ``out[i, j] = x[i, index[i, j]]`` for 2-D x and index."""
    if x.ndim != 2 or index.ndim != 2 or index.shape[0] != x.shape[0]:
        raise ShapeError(
            f"index_sample: x and index must be 2-D with the same rows, got x{x.shape}, index{index.shape}"
        )
    return take_along_axis(x, index, 1, broadcast=False)


def multiplex(inputs, index, name=None):
    """``paddle.multiplex``: row ``i`` of the output is row ``i`` of ``inputs[index[i]]``."""
    stacked = stack(list(inputs), 0)
    rows = reshape(ew.cast(index, "int64"), [1, -1] + [1] * (stacked.ndim - 2))
    rows = broadcast_to(rows, [1, *stacked.shape[1:]])
    return reshape(take_along_axis(stacked, rows, 0, broadcast=False), stacked.shape[1:])


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):  # noqa: A002
    """``paddle.shard_index``: an index in shard ``shard_id`` (of ``nshards`` equal shards of
    ``index_num``) becomes its offset in the shard; others become ``ignore_value``."""
    if not 0 <= shard_id < nshards:
        raise ConfigError(f"shard_index: shard_id must lie in [0, {nshards}), got {shard_id}")
    size = (index_num + nshards - 1) // nshards
    inside = ew.BINARY["equal"](ew.BINARY["floor_divide"](input, size), shard_id)
    return where(inside, input - shard_id * size, input * 0 + ignore_value)


TENSOR_METHODS = [
    "scatter_reduce", "scatter_add", "scatter_nd", "index_put", "select_scatter", "slice_scatter",
    "diagonal_scatter", "masked_scatter", "index_sample", "multiplex", "shard_index",
]  # fmt: skip
TOP_LEVEL = list(TENSOR_METHODS)
TENSOR_METHODS += ["fill_diagonal_tensor", "fill_diagonal_tensor_", "fill_diagonal_"]
