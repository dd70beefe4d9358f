"""Sparse binary ops: elementwise over the union of two patterns, and sparse x dense products.

Products gather the dense operand's rows at the stored columns and index-add the scaled rows into
the output rows, so the gradient of the sparse operand has its pattern (Paddle's) and the dense
operand's is dense, both by the tape."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import elementwise as ew
from ..ops.creation import zeros
from ..ops.gather_scatter import index_add
from ..ops.index import gather_nd
from ..ops.reduce import sum as dense_sum
from ..ops.shape import reshape, squeeze, transpose, unsqueeze
from .convert import as_coo, coalesce, like
from .tensor import INDEX, SparseCooTensor, SparseTensor, require_sparse


def _linear(x: SparseCooTensor) -> np.ndarray:
    return np.ravel_multi_index(tuple(x._indices), x.shape[: x.sparse_dim()]) if x.nnz() else np.zeros(0, INDEX)


def _spread(x: SparseCooTensor, at: np.ndarray, size: int) -> Tensor:
    """x's values placed at rows ``at`` of a zero [size, *dense dims] tensor."""
    values = x.values()
    return index_add(zeros([size, *values.shape[1:]], values.dtype), Tensor(at), 0, values)


def _elementwise(op: str, fn, x, y, every_entry: bool = False):
    require_sparse(x)
    require_sparse(y)
    if x.shape != y.shape:
        raise ShapeError(f"sparse.{op}: x{x.shape} and y{y.shape} must have the same shape (no broadcasting)")
    a, b = coalesce(as_coo(x)), coalesce(as_coo(y))
    if a.sparse_dim() != b.sparse_dim():
        raise ShapeError(f"sparse.{op}: x and y index {a.sparse_dim()} and {b.sparse_dim()} dims; make them equal")
    la, lb = _linear(a), _linear(b)
    union = np.arange(int(np.prod(a.shape[: a.sparse_dim()]))) if every_entry else np.union1d(la, lb)
    values = fn(_spread(a, np.searchsorted(union, la), union.size), _spread(b, np.searchsorted(union, lb), union.size))
    indices = np.stack(np.unravel_index(union, a.shape[: a.sparse_dim()])).astype(INDEX).reshape(a.sparse_dim(), -1)
    return like(x, SparseCooTensor(indices, values, a.shape, coalesced=True))


def add(x, y, name=None):
    """``paddle.sparse.add``: over the union of the two patterns (same shape, same layout out as x)."""
    return _elementwise("add", ew.BINARY["add"], x, y)


def subtract(x, y, name=None):
    return _elementwise("subtract", ew.BINARY["subtract"], x, y)


def multiply(x, y, name=None):
    return _elementwise("multiply", ew.BINARY["multiply"], x, y)


def divide(x, y, name=None):
    """Over every entry, as Paddle's kernel: the quotient of two absent zeros is a stored NaN."""
    return _elementwise("divide", ew.BINARY["divide"], x, y, every_entry=True)


def is_same_shape(x, y) -> bool:
    """``paddle.sparse.is_same_shape``: dense and sparse tensors alike."""
    return list(x.shape) == list(y.shape)


def mask_as(x: Tensor, mask, name=None):
    """``paddle.sparse.mask_as``: the entries of dense ``x`` at ``mask``'s pattern, in its layout."""
    require_sparse(mask)
    if list(x.shape) != mask.shape:
        raise ShapeError(f"sparse.mask_as: x{list(x.shape)} and mask{mask.shape} must have the same shape")
    coo = as_coo(mask)
    return mask.with_values(gather_nd(x, Tensor(np.ascontiguousarray(coo._indices.T))))


def _rows_and_cols(op: str, x, y: Tensor):
    """The batch-row and batch-column keys of a 2-D/3-D sparse x's entries, checked against dense y."""
    require_sparse(x)
    if not isinstance(y, Tensor) or isinstance(y, SparseTensor):
        raise ShapeError(f"sparse.{op}: y must be a dense Tensor here (sparse x sparse is not supported); "
                         "call y.to_dense()")  # fmt: skip
    coo = as_coo(x)
    if x.ndim not in (2, 3) or coo.sparse_dim() != x.ndim or y.ndim != x.ndim or y.shape[-2] != x.shape[-1]:
        raise ShapeError(f"sparse.{op}: x{x.shape} @ y{y.shape} needs 2-D or batched 3-D operands with "
                         "x's last dim equal to y's second last, and x indexed in every dim")  # fmt: skip
    if x.ndim == 3 and y.shape[0] != x.shape[0]:
        raise ShapeError(f"sparse.{op}: batch sizes differ, x{x.shape} and y{y.shape}")
    batch = coo._indices[0] if x.ndim == 3 else np.zeros(coo.nnz(), INDEX)
    return coo, batch, coo._indices[-2], coo._indices[-1]


def matmul(x, y, name=None):
    """``paddle.sparse.matmul``: sparse [B,] M x K times dense [B,] K x N, a dense result."""
    coo, batch, rows, cols = _rows_and_cols("matmul", x, y)
    rows_of_y = reshape(y, [-1, y.shape[-1]])
    picked = gather_nd(rows_of_y, Tensor((batch * y.shape[-2] + cols).reshape(-1, 1)))
    scaled = unsqueeze(coo.values(), 1) * picked
    out = index_add(
        zeros([int(np.prod(x.shape[:-1])), y.shape[-1]], y.dtype), Tensor(batch * x.shape[-2] + rows), 0, scaled
    )
    return reshape(out, [*x.shape[:-1], y.shape[-1]])


def mv(x, vec, name=None):
    """``paddle.sparse.mv``: a 2-D sparse matrix times a dense vector."""
    if x.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"sparse.mv: x must be 2-D and vec 1-D, got x{x.shape} and vec{vec.shape}")
    return squeeze(matmul(x, unsqueeze(vec, 1)), 1)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002 - Paddle's name
    """``paddle.sparse.addmm``: ``beta * input + alpha * (x @ y)`` with sparse x, dense y and input."""
    return ew.scale(input, float(beta)) + ew.scale(matmul(x, y), float(alpha))


def masked_matmul(x: Tensor, y: Tensor, mask, name=None):
    """``paddle.sparse.masked_matmul``: dense x @ dense y, computed only at ``mask``'s pattern."""
    require_sparse(mask)
    if x.ndim != mask.ndim or y.ndim != mask.ndim or mask.shape != [*x.shape[:-1], y.shape[-1]]:
        raise ShapeError(f"sparse.masked_matmul: x{x.shape} @ y{y.shape} must have mask's shape {mask.shape}")
    coo = as_coo(mask)
    batch = coo._indices[:-2]
    rows = gather_nd(x, Tensor(np.ascontiguousarray(np.stack([*batch, coo._indices[-2]]).T)))
    y_t = transpose(y, [*range(y.ndim - 2), y.ndim - 1, y.ndim - 2])
    cols = gather_nd(y_t, Tensor(np.ascontiguousarray(np.stack([*batch, coo._indices[-1]]).T)))
    return mask.with_values(dense_sum(rows * cols, axis=1))
