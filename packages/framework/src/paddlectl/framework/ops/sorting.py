"""Sorting: ``sort``, ``argsort`` and ``topk``, whose value gradients are scatters by the order
(``take_along_axis``'s backward op), so they differentiate to any order."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import refuse_complex
from .index import _along_grad


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable sort order along ``axis``; descending keeps equal entries in their original order too."""
    refuse_complex("sort", x)
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
    refuse_complex("topk", x)
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


TENSOR_METHODS = ["topk", "sort", "argsort"]
