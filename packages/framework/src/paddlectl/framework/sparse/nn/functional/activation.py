"""``paddle.sparse.nn.functional`` activations: each stored value through the dense activation,
and softmax over the stored entries of each row (absent entries are -inf, not 0)."""

from __future__ import annotations

import numpy as np

from ....core.tensor import Tensor
from ....errors import ShapeError
from ....ops import activation as A
from ....ops import elementwise as ew
from ....ops.creation import zeros
from ....ops.gather_scatter import index_add
from ....ops.index import index_select
from ...convert import as_coo
from ...tensor import INDEX, require_sparse
from ...unary import on_values


def relu(x, name=None):
    return on_values(x, A.relu)


def relu6(x, name=None):
    return on_values(x, A.relu6)


def leaky_relu(x, negative_slope=0.01, name=None):
    return on_values(x, lambda v: A.leaky_relu(v, negative_slope))


def softmax(x, axis=-1, name=None):
    """Softmax along the last axis over each row's stored values (COO indexed in every dim, or CSR).
    The row maximum subtracted for stability is a constant: softmax does not depend on it."""
    require_sparse(x)
    coo = as_coo(x)
    if axis not in (-1, x.ndim - 1) or coo.sparse_dim() != x.ndim:
        raise ShapeError(f"sparse.softmax: axis must be -1 and every dim indexed, got axis {axis}, shape {x.shape}, "
                         f"sparse_dim {coo.sparse_dim()}")  # fmt: skip
    rows = np.ravel_multi_index(tuple(coo._indices[:-1]), x.shape[:-1]) if coo.nnz() else np.zeros(0, INDEX)
    _, group = np.unique(rows, return_inverse=True)
    values = coo.values()
    peak = np.full(group.max(initial=-1) + 1, -np.inf, values.dtype)
    np.maximum.at(peak, group, values.numpy())
    group_t = Tensor(group.astype(INDEX))
    e = ew.UNARY["exp"](values - Tensor(peak[group]))
    total = index_add(zeros([peak.size], values.dtype), group_t, 0, e)
    return x.with_values(e / index_select(total, group_t))
