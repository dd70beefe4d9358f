"""``paddle.nn.functional.scaled_dot_product_attention``, composed as Paddle's math backend:
``softmax(Q K^T * scale + mask) V`` on ``[batch, seq, heads, head_dim]`` tensors."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from .activation import softmax
from .dropout import dropout
from .linalg import matmul
from .shape import expand, flatten, transpose, triu, unsqueeze


def _repeat_heads(t, repeats: int):
    if repeats == 1:
        return t
    b, s, h, d = t.shape
    return flatten(expand(unsqueeze(t, 3), [b, s, h, repeats, d]), 2, 3)


def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, training=True, backend=None, scale=None,
    enable_gqa=True, name=None,
):  # fmt: skip
    """Attention over ``[batch, seq, heads, head_dim]``; a bool mask marks the positions that take
    part, a float mask is added to the scores; ``is_causal`` masks future keys (and ignores the mask)."""
    for what, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim != 4:
            raise ShapeError(
                f"scaled_dot_product_attention: {what} must be [batch, seq, heads, head_dim], got {t.shape}"
            )
    q_heads, k_heads = query.shape[2], key.shape[2]
    if k_heads == 0 or q_heads % k_heads:
        raise ShapeError(
            f"scaled_dot_product_attention: query heads {q_heads} must be a multiple of key heads {k_heads}"
        )
    key, value = _repeat_heads(key, q_heads // k_heads), _repeat_heads(value, q_heads // k_heads)
    head_dim = query.shape[-1]
    scale = scale or (head_dim**-0.5 if head_dim else 1.0)
    q, k, v = (transpose(t, [0, 2, 1, 3]) for t in (query, key, value))
    scores = matmul(q * float(scale), k, transpose_y=True)
    if is_causal:
        scores = scores + triu(Tensor._wrap(np.full(scores.shape[-2:], -1e4, dtype=scores.dtype)), 1)
    elif attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            attn_mask = Tensor._wrap(np.where(attn_mask._data, 0.0, -np.inf).astype(scores.dtype))
        elif attn_mask.dtype != scores.dtype:
            raise DTypeError(
                f"scaled_dot_product_attention: attn_mask must be bool or {scores.dtype.name}, got {attn_mask.dtype.name}"
            )
        scores = scores + attn_mask
    weights = softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=training, mode="upscale_in_train")
    return transpose(matmul(weights, v), [0, 2, 1, 3])


sdpa = scaled_dot_product_attention
FUNCTIONAL = ["scaled_dot_product_attention", "sdpa"]
