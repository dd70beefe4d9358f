"""Linear maps, normalisation and distances for ``paddle.nn.functional``: linear, bilinear,
normalize, cosine_similarity, pairwise_distance, all compositions of existing ops."""

from __future__ import annotations

from ..errors import ShapeError
from . import elementwise as ew
from . import reduce
from .einsum import einsum
from .linalg import matmul
from .norms import vector_norm


def linear(x, weight, bias=None, name=None):
    """``x @ weight + bias`` with Paddle's weight layout ``[in_features, out_features]``."""
    if weight.ndim != 2 or x.shape[-1] != weight.shape[0]:
        raise ShapeError(
            f"linear: x{x.shape} cannot be multiplied by weight{weight.shape}; weight must be "
            f"[in_features={x.shape[-1]}, out_features]"
        )
    out = matmul(x, weight)
    return out if bias is None else out + bias


def bilinear(x1, x2, weight, bias=None, name=None):
    """``out[b, o] = x1[b] @ weight[o] @ x2[b] + bias[o]`` with weight ``[out, in1, in2]``."""
    if weight.ndim != 3 or x1.shape[-1] != weight.shape[1] or x2.shape[-1] != weight.shape[2]:
        raise ShapeError(
            f"bilinear: weight{weight.shape} must be [out, {x1.shape[-1]}, {x2.shape[-1]}] for x1{x1.shape}, x2{x2.shape}"
        )
    out = einsum("bi,oij,bj->bo", x1, weight, x2)
    return out if bias is None else out + bias


def normalize(x, p=2, axis=1, epsilon=1e-12, out=None, name=None):
    """``x / max(||x||_p, epsilon)`` along ``axis``."""
    norm = vector_norm(x, float(p), axis, keepdim=True)
    return x / ew.BINARY["maximum"](norm, epsilon)


def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """``sum(x1 * x2) / max(||x1|| * ||x2||, eps)`` along ``axis`` (Paddle clamps the product)."""
    dot = reduce.sum(x1 * x2, axis)
    n1 = reduce.sum(x1 * x1, axis)
    n2 = reduce.sum(x2 * x2, axis)
    return dot / ew.UNARY["sqrt"](ew.BINARY["maximum"](n1 * n2, eps * eps))


def pairwise_distance(x, y, p=2.0, epsilon=1e-6, keepdim=False, name=None):
    """``||x - y + epsilon||_p`` over the last dim."""
    return vector_norm(x - y + epsilon, float(p), -1, keepdim=keepdim)


FUNCTIONAL = ["linear", "bilinear", "normalize", "cosine_similarity", "pairwise_distance"]
