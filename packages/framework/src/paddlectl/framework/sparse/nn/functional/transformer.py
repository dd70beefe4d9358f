"""``paddle.sparse.nn.functional.attention``: softmax(Q K^T / sqrt(d)) V computed only at the
stored entries of a CSR layout (Paddle runs it on CUDA 11.8+ only).

Scores are ``sparse.masked_matmul`` at the layout, masked entries (0 in ``key_padding_mask`` or
``attn_mask``) get -1e9 added as in Paddle's reference, the row softmax runs over stored entries
and the result is ``sparse.matmul`` with V: all ops, so Q, K and V get gradients."""

from __future__ import annotations

import math

import numpy as np

from ....core.tensor import Tensor
from ....errors import LayoutError, ShapeError
from ....ops.index import gather_nd
from ....ops.shape import reshape, transpose
from ...binary import masked_matmul, matmul
from ...tensor import SparseCsrTensor
from .activation import softmax


def _masked_entries(scores, key_padding_mask, attn_mask, heads: int):
    """1 where an entry is kept, 0 where a mask hides it, for each stored entry of ``scores``."""
    batch_head, rows, cols = scores.to_sparse_coo()._indices
    keep = None
    if key_padding_mask is not None:
        keep = gather_nd(key_padding_mask, Tensor(np.stack([batch_head // heads, cols], axis=1)))
    if attn_mask is not None:
        kept = gather_nd(attn_mask, Tensor(np.stack([rows, cols], axis=1)))
        keep = kept if keep is None else keep * kept
    return keep


def attention(query, key, value, sparse_mask, key_padding_mask=None, attn_mask=None, name=None):
    """Q, K, V [batch, heads, seq, head_dim]; ``sparse_mask`` a CSR [batch * heads, seq, seq] layout
    (its values are ignored); returns [batch, heads, seq, head_dim]."""
    if not isinstance(sparse_mask, SparseCsrTensor):
        raise LayoutError("sparse attention: sparse_mask must be a CSR tensor (.to_sparse_csr() of the layout)")
    if query.ndim != 4 or key.shape != query.shape or value.shape != query.shape:
        raise ShapeError(f"sparse attention: query, key and value must share one 4-D shape, got {query.shape}, "
                         f"{key.shape} and {value.shape}")  # fmt: skip
    batch, heads, seq, head_dim = query.shape
    if sparse_mask.shape != [batch * heads, seq, seq]:
        raise ShapeError(f"sparse attention: sparse_mask must have shape {[batch * heads, seq, seq]}, "
                         f"got {sparse_mask.shape}")  # fmt: skip
    q, k, v = (reshape(t, [batch * heads, seq, head_dim]) for t in (query, key, value))
    scores = masked_matmul(q, transpose(k, [0, 2, 1]), sparse_mask)
    scaled = scores.values() * (1.0 / math.sqrt(head_dim))
    keep = _masked_entries(scores, key_padding_mask, attn_mask, heads)
    if keep is not None:
        scaled = scaled + (keep.astype(scaled.dtype) - 1.0) * 1e9
    probs = softmax(scores.with_values(scaled))
    return reshape(matmul(probs, v), [batch, heads, seq, head_dim])
