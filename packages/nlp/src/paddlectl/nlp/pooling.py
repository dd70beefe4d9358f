"""Sentence vectors from token vectors: sentence-transformers' mean pooling and L2 normalisation.

Framework ops, so the same code runs eagerly and inside a traced (exported) model.
"""

from __future__ import annotations

import paddlectl.framework as paddle

__all__ = ["mean_pool", "normalize"]


def mean_pool(hidden, attention_mask):
    """The mean of the token vectors that the mask keeps: [batch, seq, dim], [batch, seq] -> [batch, dim].

    Padding must not dilute the mean, so a text's vector does not depend on its batch-mates.
    """
    keep = paddle.unsqueeze(paddle.cast(attention_mask, hidden.dtype), axis=-1)
    total = paddle.sum(hidden * keep, axis=1)
    return total / paddle.clip(paddle.sum(keep, axis=1), min=1e-9)


def normalize(x, eps: float = 1e-12):
    """Unit L2 norm along the last axis: cosine similarity becomes a dot product."""
    norm = paddle.sqrt(paddle.sum(x * x, axis=-1, keepdim=True))
    return x / paddle.clip(norm, min=eps)
