"""``paddle.nn.functional.scaled_dot_product_attention``, composed as Paddle's math backend:
``softmax(Q K^T * scale + mask) V`` on ``[batch, seq, heads, head_dim]`` tensors; and ``attention``,
the one-op form the ``fuse_attention`` pass gives an inference program."""

from __future__ import annotations

import numpy as np

from ..core import items as item_rules
from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..errors import DTypeError, ShapeError
from ..kernels import activation as K
from ..kernels import attention as KA
from ..kernels.conv_select import threaded
from . import elementwise as ew
from ._util import constant
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
        scores = scores + triu(constant(np.full(scores.shape[-2:], -1e4), scores.dtype), 1)
    elif attn_mask is not None:
        if attn_mask.dtype == np.bool_:
            attn_mask = ew.where(attn_mask, constant(0, scores.dtype), constant(-np.inf, scores.dtype))
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


# ----- attention (inference only: made by the ``fuse_attention`` pass) ------------------------------


PARALLEL_MIN_SCORES = 1 << 16
"""Scores from which the heads run on every thread: a parallel region costs ~60 us (a futex wake),
about what a second core saves on 50k scores (~3 ns a score on one core); MiniLM at batch 1 (196k
scores) 0.56 -> 0.37 ms an attention on two cores of a Xeon (Sapphire Rapids)."""


def _split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """[N, L, H*D] -> a [N, H, L, D] view (also of a column slice of a wider array: no copy)."""
    n, length, width = x.shape
    return x.reshape(n, length, heads, width // heads).transpose(0, 2, 1, 3)


def _key_mask(mask, lk: int):
    """The mask as one row of key offsets per image ([N or 1, Lk] float32), or None where it varies
    by head or query (then the stacked products run)."""
    if mask is None:
        return np.zeros((1, lk), np.float32)
    shape = (1,) * (4 - mask.ndim) + tuple(mask.shape)
    if shape[1] != 1 or shape[2] != 1:
        return None
    rows = np.broadcast_to(mask.reshape(shape[0], shape[3]), (shape[0], lk))
    return np.ascontiguousarray(rows, dtype=np.float32)


def _tiled(q, k, v, mask, heads, scale):
    """``kernels.attention`` where it applies (float32, whole panels per head, a key-row mask), else None."""
    d, dv = q.shape[2] // heads, v.shape[2] // heads
    arrays = (q, k, v)
    if any(a.dtype != np.float32 or a.strides[2] != 4 for a in arrays) or not (KA.fits(d) and KA.fits(dv)):
        return None
    rows = _key_mask(mask, k.shape[1])
    if rows is None:
        return None
    n, lq = q.shape[:2]
    out = np.empty((n * lq, v.shape[2]), np.float32)
    scores = n * heads * lq * k.shape[1]
    KA.attention.run(scores >= PARALLEL_MIN_SCORES and threaded(), q, k, v, rows, np.float32(scale), heads, out)
    return out.reshape(n, lq, v.shape[2])


def _attention(q, k, v, mask, heads, scale):
    """``softmax(scale * Q K^T + mask) V`` per head of [N, L, H*D] ``q``, ``k``, ``v``, merged back to
    [N, Lq, H*Dv]: on register tiles per (image, head) where ``_tiled`` applies; else the heads are
    split and merged by strides: the products read Q, K and V where the projections wrote them and
    write each head's result into its columns of the output (the traced form copies at four
    transposes), and scale, mask and softmax take one pass over the scores."""
    tiled = _tiled(q, k, v, mask, heads, scale)
    if tiled is not None:
        return tiled
    scores = np.matmul(_split_heads(q, heads), _split_heads(k, heads).transpose(0, 1, 3, 2))
    if mask is not None:
        mask = np.broadcast_to(mask.astype(scores.dtype, copy=False), scores.shape)
    K.attention_softmax(scores, mask, np.array([scale], scores.dtype))
    n, length, width = q.shape[0], q.shape[1], v.shape[2]
    out = np.empty((n, length, heads, width // heads), scores.dtype)
    np.matmul(scores, _split_heads(v, heads), out=out.transpose(0, 2, 1, 3))
    return out.reshape(n, length, width)


def _attention_forward(ctx, q, k, v, mask, heads, scale):
    return _attention(q, k, v, mask, heads, scale)


def _attention_infer(q: Spec, k: Spec, v: Spec, mask, heads, scale) -> Spec:
    def fits(a, b):
        return not (isinstance(a, int) and isinstance(b, int)) or a == b

    def splits(width):
        return not isinstance(width, int) or width % heads == 0

    ranks = len(q.shape) == len(k.shape) == len(v.shape) == 3
    if not ranks or not all(fits(a, b) for a, b in ((q.shape[2], k.shape[2]), (k.shape[1], v.shape[1]))):
        raise ShapeError(
            f"attention: expected q [N, Lq, E], k [N, Lk, E] and v [N, Lk, Ev], got q{list(q.shape)}, "
            f"k{list(k.shape)} and v{list(v.shape)}"
        )
    if heads < 1 or not (splits(q.shape[2]) and splits(v.shape[2])):
        raise ShapeError(f"attention: {heads} heads do not split q{list(q.shape)} and v{list(v.shape)} evenly")
    scores = (q.shape[0], heads, q.shape[1], k.shape[1])
    if mask is not None:
        try:
            fits_scores = broadcast_shapes("attention", mask.shape, scores) == scores
        except ShapeError:
            fits_scores = False
        if not fits_scores:
            raise ShapeError(f"attention: the mask {list(mask.shape)} must broadcast to the scores {list(scores)}")
    return Spec((q.shape[0], q.shape[1], v.shape[2]), q.dtype)


def _attention_samples(rng):
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    mask = np.where(rng.random((2, 1, 1, 3)) < 0.3, -1e4, 0.0)
    return [
        Sample((q, k, v, None), {"heads": 2, "scale": 0.5}),
        Sample((q, rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 6)), None), {"heads": 2, "scale": 1.0}),
        Sample((q, k, v, mask), {"heads": 1, "scale": 0.5}),
    ]


attention_op = OpDef(
    "attention",
    _attention_forward,
    None,
    _attention_infer,
    OPAQUE,
    samples=_attention_samples,
    items=item_rules.leading,
)


@lowering("attention")
def _attention_lowering(attrs, in_types, out_types):
    heads, scale = attrs["heads"], attrs["scale"]
    return lambda q, k, v, mask: _attention(q, k, v, mask, heads, scale)


FUNCTIONAL = ["scaled_dot_product_attention", "sdpa"]
