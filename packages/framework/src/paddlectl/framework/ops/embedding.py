"""Embedding lookup: rows of a weight table gathered by integer ids; the padding row reads as
zeros and receives no gradient, as in Paddle."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec
from ..errors import DTypeError, ShapeError


def _embedding_forward(ctx, ids, weight, padding_idx=None, scale_grad_by_freq=False, max_norm=None, norm_type=2.0):
    if ids.dtype.kind not in "iu":
        raise DTypeError(f"embedding: ids must be an integer tensor (int32/int64), got {ids.dtype}")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D [num_embeddings, dim], got shape {list(weight.shape)}")
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise ShapeError(
            f"embedding: ids must lie in [0, {weight.shape[0]}) for a table of {weight.shape[0]} rows, "
            f"got values in [{ids.min()}, {ids.max()}]"
        )
    if max_norm is not None:
        _renorm_(weight, ids, max_norm, norm_type)
    out = weight[ids]
    if padding_idx is not None:
        out[ids == padding_idx] = 0
    ctx.save(ids, weight.shape)
    return out


def _embedding_vjp(ctx, g):
    ids, shape = ctx.saved
    flat = ids.reshape(-1)
    rows = g.reshape(-1, shape[1])
    if ctx.attrs.get("scale_grad_by_freq"):
        counts = np.bincount(flat, minlength=shape[0])
        rows = rows / counts[flat][:, None].astype(g.dtype)
    grad = np.zeros(shape, dtype=g.dtype)
    np.add.at(grad, flat, rows)
    padding_idx = ctx.attrs.get("padding_idx")
    if padding_idx is not None:
        grad[padding_idx] = 0
    return None, grad


def _embedding_infer(ids: Spec, weight: Spec, **attrs) -> Spec:
    return Spec((*ids.shape, weight.shape[1]), weight.dtype)


embedding_op = OpDef("embedding", _embedding_forward, _embedding_vjp, _embedding_infer, OPAQUE)


def _renorm_(data: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Rescale in place the looked-up rows whose norm exceeds ``max_norm`` (Paddle writes the weight;
    no gradient sees it). A traced program refuses this write into a parameter."""
    rows = np.unique(ids)
    norms = np.linalg.norm(data[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    data[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(data.dtype)


def embedding(
    x, weight, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False, scale_grad_by_freq=False, name=None
):
    """``weight[x]``. ``padding_idx`` may be negative (counted from the end); ``sparse`` is accepted
    and the gradient is dense."""
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx must be in [{-num}, {num}), got {padding_idx}")
        padding_idx = int(padding_idx) % num
    renorm = {} if max_norm is None else {"max_norm": float(max_norm), "norm_type": float(norm_type)}
    return embedding_op(x, weight, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq), **renorm)


FUNCTIONAL = ["embedding"]
