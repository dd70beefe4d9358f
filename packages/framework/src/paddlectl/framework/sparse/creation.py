"""``paddle.sparse.sparse_coo_tensor`` and ``sparse_csr_tensor``: checked index arrays and values."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops.creation import to_tensor
from .tensor import INDEX, SparseCooTensor, SparseCsrTensor


def _index_array(op: str, name: str, value) -> np.ndarray:
    array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    if array.size and array.dtype.kind not in "iu":
        raise ShapeError(f"{op}: {name} must hold integers, got dtype {array.dtype}")
    return array.astype(INDEX)


def _values(values, dtype, stop_gradient: bool) -> Tensor:
    """A Tensor given with gradients wanted stays in its graph (the sparse tensor's grad is its grad);
    anything else becomes a new leaf."""
    if isinstance(values, Tensor):
        values = values if dtype is None else values.astype(dtype)
        return values if not stop_gradient else values.detach()
    return to_tensor(values, dtype=dtype, stop_gradient=stop_gradient)


def sparse_coo_tensor(indices, values, shape=None, dtype=None, place=None, stop_gradient=True) -> SparseCooTensor:
    """A COO tensor from ``indices`` [sparse_dim, nnz] and ``values`` [nnz, *dense dims]; ``shape``
    defaults to the largest index + 1 per sparse dim, then the values' dense dims."""
    op = "sparse_coo_tensor"
    indices = _index_array(op, "indices", indices)
    values = _values(values, dtype, stop_gradient)
    if indices.ndim != 2:
        raise ShapeError(f"{op}: indices must be 2-D [sparse_dim, nnz], got shape {list(indices.shape)}")
    if values.ndim == 0 or values.shape[0] != indices.shape[1]:
        raise ShapeError(f"{op}: values{values.shape} must have one row per index column ({indices.shape[1]})")
    if (indices < 0).any():
        raise ShapeError(f"{op}: indices must be non-negative")
    dense_dims = values.shape[1:]
    if shape is None:
        shape = [*(indices.max(axis=1) + 1 if indices.size else [0] * len(indices)), *dense_dims]
    shape = [int(d) for d in (shape.tolist() if isinstance(shape, Tensor) else shape)]
    sparse_dim = indices.shape[0]
    if len(shape) != sparse_dim + len(dense_dims) or list(shape[sparse_dim:]) != dense_dims:
        raise ShapeError(
            f"{op}: shape {shape} must be {sparse_dim} indexed dims followed by the values' dense dims {dense_dims}"
        )
    if indices.size and (indices.max(axis=1) >= shape[:sparse_dim]).any():
        raise ShapeError(f"{op}: an index is out of bounds for shape {shape}; the largest per dim is "
                         f"{indices.max(axis=1).tolist()}")  # fmt: skip
    return SparseCooTensor(indices, values, shape)


def sparse_csr_tensor(crows, cols, values, shape, dtype=None, place=None, stop_gradient=True) -> SparseCsrTensor:
    """A 2-D or batched 3-D CSR tensor; ``crows`` holds M + 1 offsets per batch."""
    op = "sparse_csr_tensor"
    crows, cols = _index_array(op, "crows", crows).ravel(), _index_array(op, "cols", cols).ravel()
    values = _values(values, dtype, stop_gradient)
    shape = [int(d) for d in (shape.tolist() if isinstance(shape, Tensor) else shape)]
    if len(shape) not in (2, 3):
        raise ShapeError(f"{op}: CSR holds 2-D or batched 3-D tensors, got shape {shape}")
    batches = shape[0] if len(shape) == 3 else 1
    if crows.size != batches * (shape[-2] + 1):
        raise ShapeError(
            f"{op}: crows must hold {batches * (shape[-2] + 1)} offsets for shape {shape}, got {crows.size}"
        )
    offsets = crows.reshape(batches, -1)
    if (offsets[:, 0] != 0).any() or (np.diff(offsets, axis=1) < 0).any():
        raise ShapeError(f"{op}: each batch's crows must start at 0 and never decrease, got {crows.tolist()}")
    if values.ndim != 1 or cols.size != values.shape[0] or offsets[:, -1].sum() != cols.size:
        raise ShapeError(
            f"{op}: cols ({cols.size}), values{values.shape} and the row offsets ({int(offsets[:, -1].sum())}) "
            "must all count the same stored entries"
        )
    if cols.size and (cols.min() < 0 or cols.max() >= shape[-1]):
        raise ShapeError(f"{op}: a column index is out of bounds for {shape[-1]} columns")
    return SparseCsrTensor(crows, cols, values, shape)
