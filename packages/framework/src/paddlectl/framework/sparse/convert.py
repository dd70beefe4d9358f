"""Dense <-> COO <-> CSR, and ``coalesce``: the patterns in NumPy, the values through ops (gather,
scatter, index-add), so a conversion is differentiable in the values both ways."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import LayoutError, ShapeError
from ..ops.creation import zeros
from ..ops.gather_scatter import index_add
from ..ops.index import gather_nd, scatter
from ..ops.shape import reshape
from .tensor import INDEX, SparseCooTensor, SparseCsrTensor, require_sparse


def _check_sparse_dim(sparse_dim, ndim: int) -> int:
    sparse_dim = ndim if sparse_dim is None else int(sparse_dim)
    if not 0 < sparse_dim <= ndim:
        raise ShapeError(f"to_sparse_coo: sparse_dim must be in [1, {ndim}] for a {ndim}-D tensor, got {sparse_dim}")
    return sparse_dim


def dense_to_coo(x: Tensor, sparse_dim=None) -> SparseCooTensor:
    """``Tensor.to_sparse_coo``: the first ``sparse_dim`` dims indexed, a slice stored wherever any
    of its entries is non-zero (NaN counts as non-zero), in row-major order."""
    sparse_dim = _check_sparse_dim(sparse_dim, x.ndim)
    array = x.numpy()
    mask = (array != 0).any(axis=tuple(range(sparse_dim, x.ndim))) if sparse_dim < x.ndim else array != 0
    indices = np.stack(np.nonzero(mask)).astype(INDEX).reshape(sparse_dim, -1)
    values = gather_nd(x, Tensor(np.ascontiguousarray(indices.T)))
    return SparseCooTensor(indices, values, x.shape, coalesced=True)


def coo_to_dense(x: SparseCooTensor) -> Tensor:
    """The stored values written into zeros; of duplicated indices the last one wins, as in Paddle."""
    sparse_shape = x.shape[: x.sparse_dim()]
    linear = np.ravel_multi_index(tuple(x._indices), sparse_shape) if x.nnz() else np.zeros(0, INDEX)
    rows = zeros([int(np.prod(sparse_shape)), *x.shape[x.sparse_dim() :]], x.dtype)
    return reshape(scatter(rows, Tensor(linear.astype(INDEX)), x.values()), x.shape)


def coalesce(x: SparseCooTensor, name=None) -> SparseCooTensor:
    """``paddle.sparse.coalesce``: indices sorted row-major, duplicates summed into one entry."""
    if x._coalesced:
        return x
    sparse_shape = x.shape[: x.sparse_dim()]
    linear = np.ravel_multi_index(tuple(x._indices), sparse_shape) if x.nnz() else np.zeros(0, INDEX)
    unique, inverse = np.unique(linear, return_inverse=True)
    values = x.values()
    summed = index_add(zeros([unique.size, *values.shape[1:]], values.dtype), Tensor(inverse.astype(INDEX)), 0, values)
    indices = np.stack(np.unravel_index(unique, sparse_shape)).astype(INDEX).reshape(len(sparse_shape), -1)
    return SparseCooTensor(indices, summed, x.shape, coalesced=True)


def coo_to_csr(x: SparseCooTensor) -> SparseCsrTensor:
    """``to_sparse_csr`` of a 2-D or 3-D COO tensor indexed in every dim."""
    if x.ndim not in (2, 3) or x.sparse_dim() != x.ndim:
        raise LayoutError(
            f"to_sparse_csr: CSR holds 2-D or batched 3-D tensors with every dim indexed; this COO tensor has "
            f"shape {x.shape} and sparse_dim {x.sparse_dim()} (call to_dense().to_sparse_csr())"
        )
    x = coalesce(x)
    rows = x.shape[-2]
    batch = x._indices[0] if x.ndim == 3 else np.zeros(x.nnz(), INDEX)
    batches = x.shape[0] if x.ndim == 3 else 1
    counts = np.bincount(batch * rows + x._indices[-2], minlength=batches * rows).reshape(batches, rows)
    crows = np.concatenate([np.zeros((batches, 1), INDEX), np.cumsum(counts, axis=1)], axis=1)
    return SparseCsrTensor(crows, x._indices[-1], x.values(), x.shape)


def csr_to_coo(x: SparseCsrTensor, sparse_dim=None) -> SparseCooTensor:
    coo = SparseCooTensor(x.coo_indices(), x.values(), x.shape, coalesced=True)
    return coo if sparse_dim in (None, x.ndim) else dense_to_coo(coo_to_dense(coo), sparse_dim)


def dense_to_csr(x: Tensor) -> SparseCsrTensor:
    """``Tensor.to_sparse_csr``: a 2-D or batched 3-D tensor's non-zero entries."""
    if x.ndim not in (2, 3):
        raise ShapeError(f"to_sparse_csr: CSR holds 2-D or batched 3-D tensors, got shape {x.shape}")
    return coo_to_csr(dense_to_coo(x))


def coo_with_sparse_dim(x: SparseCooTensor, sparse_dim=None) -> SparseCooTensor:
    """``SparseCooTensor.to_sparse_coo``: itself, or re-indexed over another number of dims."""
    if sparse_dim is None or int(sparse_dim) == x.sparse_dim():
        return x
    return dense_to_coo(coo_to_dense(x), sparse_dim)


def as_coo(x) -> SparseCooTensor:
    """A sparse tensor of either layout as COO over every dim it indexes."""
    if isinstance(x, SparseCsrTensor):
        return csr_to_coo(x)
    require_sparse(x)
    return x


def like(template, coo: SparseCooTensor):
    """``coo`` in ``template``'s layout (ops on CSR answer in CSR, as Paddle's)."""
    return coo_to_csr(coo) if isinstance(template, SparseCsrTensor) else coo
