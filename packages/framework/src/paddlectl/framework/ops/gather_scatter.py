"""Reading and writing entries by index along an axis: index_add and index_fill as ops, take,
repeat_interleave, take_along_dim and argwhere as gathers. ``index_add``'s vjp gathers and
``index_fill``'s fills the gradient, both through ops, so they differentiate again."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import elementwise as ew
from ._util import constant
from .index import _as_index, _check_bounds, gather, gather_op, nonzero, take_along_axis
from .shape import flatten, reshape


def _index_add_forward(ctx, x, index, value, axis, alpha):
    _check_bounds("index_add", index, x.shape[axis], f"axis {axis} of x{list(x.shape)}")
    out = x.copy()
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, index, np.moveaxis(value, axis, 0) * value.dtype.type(alpha))
    return out


def _index_add_vjp(ctx, g):
    if not ctx.needs_input_grad[2]:
        return g, None, None
    return g, None, gather_op(g, ctx.input(1), axis=ctx.attrs["axis"]) * ctx.attrs["alpha"]


def _index_add_samples(rng):
    def sample(shape, index, axis, alpha):
        value_shape = list(shape)
        value_shape[axis] = len(index)
        x, value = rng.standard_normal(shape), rng.standard_normal(value_shape)
        return Sample((x, np.array(index), value), {"axis": axis, "alpha": alpha})

    return [sample((4, 3), [0, 2, 0], 0, 1.0), sample((2, 5), [4, 1], 1, -2.0)]


index_add_op = OpDef(
    "index_add",
    _index_add_forward,
    _index_add_vjp,
    lambda x, index, value, axis, alpha: x,
    OPAQUE,
    samples=_index_add_samples,
)


def index_add(x, index, axis, value, alpha=1, name=None, *, out=None):
    axis = normalize_axis("index_add", int(axis), x.ndim)
    index = _as_index("index_add", index)
    expected = x.shape[:axis] + [index.shape[0]] + x.shape[axis + 1 :]
    if index.ndim != 1 or value.shape != expected:
        raise ShapeError(
            f"index_add: value must have shape {expected} for x{x.shape}, index{index.shape}, got {value.shape}"
        )
    return index_add_op(x, index, value.astype(x.dtype), axis=axis, alpha=float(alpha))


def _index_fill_forward(ctx, x, index, axis, value):
    _check_bounds("index_fill", index, x.shape[axis], f"axis {axis} of x{list(x.shape)}")
    out = x.copy()
    np.moveaxis(out, axis, 0)[index] = value
    return out


index_fill_op = OpDef(
    "index_fill",
    _index_fill_forward,
    lambda ctx, g: (index_fill_op(g, ctx.input(1), axis=ctx.attrs["axis"], value=0), None),
    lambda x, index, axis, value: x,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((4, 3)), np.array([0, 2])), {"axis": 0, "value": 1.5}),
        Sample((rng.standard_normal((2, 5)), np.array([4])), {"axis": 1, "value": -1.0}),
    ],
)


def index_fill(x, index, axis, value, name=None):
    axis = normalize_axis("index_fill", int(axis), x.ndim)
    index = _as_index("index_fill", index)
    return index_fill_op(x, index, axis=axis, value=value.item() if isinstance(value, Tensor) else value)


def take(x, index, mode="raise", name=None):
    """Elements of the flattened ``x`` at ``index`` (shape of ``index``); mode 'wrap' or 'clip' fixes
    out-of-range indices, 'raise' rejects them."""
    index = _as_index("take", index)
    n = x.size
    idx = index.astype("int64")
    if mode == "wrap":
        idx = ew.BINARY["remainder"](idx, constant(n, "int64"))
    elif mode == "clip":
        idx = ew.clip(idx, 0, n - 1)
    elif mode != "raise":  # gather rejects an index out of [-n, n) and counts a negative one from the end
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return reshape(gather(flatten(x), reshape(idx, [-1])), list(index.shape))


def repeat_interleave(x, repeats, axis=None, name=None, *, output_size=None):
    """Each element (along ``axis``; of the flattened ``x`` when None) repeated ``repeats`` times."""
    if axis is None:
        x, axis = flatten(x), 0
    axis = normalize_axis("repeat_interleave", int(axis), x.ndim)
    reps = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)  # sets the output size
    if reps.ndim == 1 and reps.size != x.shape[axis]:
        raise ShapeError(f"repeat_interleave: {reps.size} repeats for dim {axis} of size {x.shape[axis]} in x{x.shape}")
    index = np.repeat(np.arange(x.shape[axis]), reps)
    return gather(x, constant(index), axis)


def take_along_dim(arr, indices, axis, broadcast=True, *, out=None):
    return take_along_axis(arr, indices, axis, broadcast)


def argwhere(input):  # noqa: A002
    return nonzero(input)


TENSOR_METHODS = ["index_add", "index_fill", "take", "repeat_interleave", "take_along_dim", "argwhere"]
TOP_LEVEL = TENSOR_METHODS
