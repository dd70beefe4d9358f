"""Sparse ops that move entries: reshape, transpose, slice, and sum (which also merges them).

Indices move in NumPy; values are selected or summed by ops, so gradients reach the stored values.
Results keep the input's layout and, as Paddle's kernels do, the input's entry order."""

from __future__ import annotations

import numpy as np

from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import elementwise as ew
from ..ops.index import index_select
from ..ops.reduce import sum as dense_sum
from ..ops.shape import reshape as dense_reshape
from ..ops.shape import slice as dense_slice
from .convert import as_coo, coalesce, like
from .tensor import INDEX, SparseCooTensor, SparseCsrTensor, require_sparse


def _fully_indexed(op: str, x) -> SparseCooTensor:
    require_sparse(x)
    coo = as_coo(x)
    if coo.sparse_dim() != x.ndim:
        raise ShapeError(f"sparse.{op}: needs every dim indexed (sparse_dim {x.ndim}), this COO tensor indexes "
                         f"{coo.sparse_dim()}; re-index it with .to_dense().to_sparse_coo({x.ndim})")  # fmt: skip
    return coo


def _resolve_shape(op: str, old: list[int], new) -> list[int]:
    """Paddle's shape rules: 0 copies the input's dim, one -1 takes what is left."""
    new = [int(d) for d in (new.tolist() if isinstance(new, Tensor) else new)]
    new = [old[i] if d == 0 else d for i, d in enumerate(new)]
    known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
    total = int(np.prod(old, dtype=np.int64))
    if new.count(-1) > 1 or any(d < -1 for d in new) or (known and total % known) or (-1 not in new and known != total):
        raise ShapeError(f"sparse.{op}: cannot reshape {old} into {new}")
    return [total // known if d == -1 else d for d in new]


def reshape(x, shape, name=None):
    """``paddle.sparse.reshape``: the entries keep their row-major position."""
    coo = _fully_indexed("reshape", x)
    new = _resolve_shape("reshape", x.shape, shape)
    linear = np.ravel_multi_index(tuple(coo._indices), x.shape) if coo.nnz() else np.zeros(0, INDEX)
    indices = np.stack(np.unravel_index(linear, new)).astype(INDEX).reshape(len(new), -1)
    return like(x, SparseCooTensor(indices, coo.values(), new, coalesced=coo._coalesced))


def transpose(x, perm, name=None):
    """``paddle.sparse.transpose``: the index rows permuted (COO entries keep their order)."""
    coo = _fully_indexed("transpose", x)
    perm = [normalize_axis("sparse.transpose", int(p), x.ndim) for p in perm]
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"sparse.transpose: perm {perm} must be a permutation of 0..{x.ndim - 1}")
    out = SparseCooTensor(coo._indices[perm], coo.values(), [x.shape[p] for p in perm])
    return like(x, out)


def slice(x, axes, starts, ends, name=None):  # noqa: A001 - Paddle's name
    """``paddle.sparse.slice``: ``[start, end)`` on each axis (negative counts from the end)."""
    require_sparse(x)
    coo = as_coo(x)
    if not len(axes) == len(starts) == len(ends):
        raise ShapeError(f"sparse.slice: axes {axes}, starts {starts} and ends {ends} must have the same length")
    keep = np.ones(coo.nnz(), bool)
    indices, shape, dense = coo._indices.copy(), x.shape, ([], [], [])
    for axis, start, end in zip(axes, starts, ends, strict=True):
        axis = normalize_axis("sparse.slice", int(axis), x.ndim)
        size = shape[axis]
        start, end = (int(v) + size if int(v) < 0 else int(v) for v in (start, end))
        start, end = min(max(start, 0), size), min(max(end, 0), size)
        shape[axis] = max(end - start, 0)
        if axis < coo.sparse_dim():
            keep &= (indices[axis] >= start) & (indices[axis] < end)
            indices[axis] -= start
        else:
            for part, value in zip(dense, (axis - coo.sparse_dim() + 1, start, end), strict=True):
                part.append(value)
    chosen = np.flatnonzero(keep)
    values = index_select(coo.values(), Tensor(chosen.astype(INDEX)))
    if dense[0]:
        values = dense_slice(values, *dense)
    return like(x, SparseCooTensor(indices[:, chosen], values, shape, coalesced=coo._coalesced))


def _sum_all(coo: SparseCooTensor, keepdim: bool) -> SparseCooTensor:
    total = dense_sum(coo.values())
    if not keepdim:  # Paddle: shape [1], one entry, 0-D values
        return SparseCooTensor(np.zeros((1, 1), INDEX), total, [1], coalesced=True)
    values = dense_reshape(total, [1] * (coo.dense_dim() + 1))
    return SparseCooTensor(np.zeros((coo.sparse_dim(), 1), INDEX), values, [1] * coo.ndim, coalesced=True)


def _sum_axis(coo: SparseCooTensor, axis: int, keepdim: bool) -> SparseCooTensor:
    shape = coo.shape
    if axis >= coo.sparse_dim():  # a dense dim: the values reduce, the pattern stays
        values = dense_sum(coo.values(), axis=axis - coo.sparse_dim() + 1, keepdim=keepdim)
        shape = [*shape[:axis], *([1] if keepdim else []), *shape[axis + 1 :]]
        return SparseCooTensor(coo._indices, values, shape, coalesced=coo._coalesced)
    indices = coo._indices.copy()
    if keepdim or coo.sparse_dim() == 1:  # Paddle keeps the only indexed dim, as size 1
        indices[axis] = 0
        shape[axis] = 1
    else:
        indices = np.delete(indices, axis, axis=0)
        del shape[axis]
    return coalesce(SparseCooTensor(indices, coo.values(), shape))


def sum(x, axis=None, dtype=None, keepdim=False, name=None):  # noqa: A001 - Paddle's name
    """``paddle.sparse.sum``: all entries (a one-entry tensor) or along one axis; CSR sums all entries
    or along the last axis only (rows kept as [M, 1]), as Paddle's kernels do."""
    require_sparse(x)
    if isinstance(axis, list | tuple):
        if len(axis) != 1:
            raise ShapeError(f"sparse.sum: one axis at a time (or None for all), got {list(axis)}")
        axis = axis[0]
    coo = as_coo(x)
    if dtype is not None:
        coo = coo.with_values(ew.cast(coo.values(), dtype))
    if isinstance(x, SparseCsrTensor):
        if axis is not None and normalize_axis("sparse.sum", int(axis), x.ndim) != x.ndim - 1:
            raise ShapeError(f"sparse.sum: a CSR tensor sums all entries or along axis -1, got axis {axis}")
        out = _sum_all(coo, True) if axis is None else _sum_axis(coo, x.ndim - 1, True)
        return like(x, out)
    if axis is None:
        return _sum_all(coo, keepdim)
    return _sum_axis(coo, normalize_axis("sparse.sum", int(axis), x.ndim), keepdim)
