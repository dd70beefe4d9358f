"""Diagonals: reading one (``diagonal``, ``trace``), writing a vector onto one (``diag``,
``diag_embed``) and block-diagonal matrices. ``diagonal`` and its transpose ``diagonal_grad``
are each other's vjp, so every order of derivative is another diagonal read or write."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import normalize_axis
from ..errors import ShapeError
from . import creation, reduce
from ._util import constant
from .linalg import matmul
from .shape import concat, reshape, transpose


def _diagonal_forward(ctx, x, offset, axis1, axis2):
    return np.diagonal(x, offset, axis1, axis2).copy()


def _diagonal_infer(x: Spec, offset, axis1, axis2) -> Spec:
    n1, n2 = x.shape[axis1], x.shape[axis2]
    if isinstance(n1, int) and isinstance(n2, int):
        size = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    else:
        size = n1 if offset == 0 else f"diag({n1},{n2},{offset})"
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (axis1, axis2))
    return Spec(rest + (size,), x.dtype)


def _diagonal_attrs(attrs) -> dict:
    return {k: attrs[k] for k in ("offset", "axis1", "axis2")}


diagonal_op = OpDef(
    "diagonal",
    _diagonal_forward,
    lambda ctx, g: diagonal_grad_op(g, shape=tuple(ctx.input(0).shape), **_diagonal_attrs(ctx.attrs)),
    _diagonal_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((3, 4)),), {"offset": 0, "axis1": 0, "axis2": 1}),
        Sample((rng.standard_normal((2, 3, 4)),), {"offset": 1, "axis1": 2, "axis2": 1}),
        Sample((rng.standard_normal((4, 3)),), {"offset": -1, "axis1": 0, "axis2": 1}),
    ],
)


def _diagonal_grad_forward(ctx, g, shape, offset, axis1, axis2):
    out = np.zeros(shape, g.dtype)
    view = np.diagonal(out, offset, axis1, axis2)
    view.setflags(write=True)
    view[...] = g
    return out


diagonal_grad_op = OpDef(
    "diagonal_grad",
    _diagonal_grad_forward,
    lambda ctx, g: diagonal_op(g, **_diagonal_attrs(ctx.attrs)),
    lambda g, shape, **attrs: Spec(tuple(shape), g.dtype),
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal(3),), {"shape": (3, 4), "offset": 0, "axis1": 0, "axis2": 1}),
        Sample((rng.standard_normal((2, 3)),), {"shape": (2, 4, 3), "offset": 1, "axis1": 2, "axis2": 1}),
    ],
)
"""Writes ``g`` onto the diagonal of zeros of ``shape``: the transpose of ``diagonal``."""


def diagonal(x, offset=0, axis1=0, axis2=1, name=None):
    a1, a2 = normalize_axis("diagonal", int(axis1), x.ndim), normalize_axis("diagonal", int(axis2), x.ndim)
    if a1 == a2:
        raise ShapeError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    return diagonal_op(x, offset=int(offset), axis1=a1, axis2=a2)


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    return reduce.sum(diagonal(x, offset, axis1, axis2), -1)


def _diag_embed_forward(ctx, x, offset, padding_value):
    n = x.shape[0] + abs(offset)
    out = np.full((n, n), padding_value, dtype=x.dtype)
    idx = np.arange(x.shape[0])
    out[idx + max(-offset, 0), idx + max(offset, 0)] = x
    return out


def _diag_embed_infer(x: Spec, offset, padding_value) -> Spec:
    n = x.shape[0] + abs(offset) if isinstance(x.shape[0], int) else x.shape[0]
    return Spec((n, n), x.dtype)


diag_embed_op = OpDef(
    "diag_vector_to_matrix",
    _diag_embed_forward,
    lambda ctx, g: diagonal_op(g, offset=ctx.attrs["offset"], axis1=0, axis2=1),
    _diag_embed_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal(3),), {"offset": k, "padding_value": v}) for k, v in ((0, 0), (1, 2.0), (-2, 0))
    ],
)


def diag(x, offset=0, padding_value=0, name=None):
    """A 1-D ``x`` becomes a square matrix with it on diagonal ``offset``; a 2-D ``x`` gives that diagonal."""
    if x.ndim == 1:
        return diag_embed_op(x, offset=int(offset), padding_value=padding_value)
    if x.ndim == 2:
        return diagonal(x, offset, 0, 1)
    raise ShapeError(f"diag: x must be 1-D or 2-D, got shape {x.shape}")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Put the last dim of ``input`` on diagonal ``offset`` of new (dim1, dim2) planes."""
    n = input.shape[-1] + abs(offset)
    eye = np.zeros((input.shape[-1], n, n), dtype=input.dtype)
    idx = np.arange(input.shape[-1])
    eye[idx, idx + max(-offset, 0), idx + max(offset, 0)] = 1
    out = matmul(reshape(input, [-1, input.shape[-1]]), reshape(constant(eye), [input.shape[-1], n * n]))
    out = reshape(out, input.shape[:-1] + [n, n])
    nd = out.ndim
    d1, d2 = dim1 % nd, dim2 % nd
    if (d1, d2) == (nd - 2, nd - 1):
        return out
    rest = [i for i in range(nd - 2)]
    perm = [None] * nd
    for slot, src in zip((d1, d2), (nd - 2, nd - 1), strict=True):
        perm[slot] = src
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return transpose(out, perm)


def block_diag(inputs, name=None):
    mats = [reshape(t, [1, -1]) if t.ndim < 2 else t for t in inputs]
    cols = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        right = cols - left - m.shape[1]
        rows.append(concat([t for t in (creation.zeros([m.shape[0], left], m.dtype), m,
                                        creation.zeros([m.shape[0], right], m.dtype)) if t.shape[1]], 1))  # fmt: skip
        left += m.shape[1]
    return concat(rows, 0)


TENSOR_METHODS = ["diagonal", "diag", "trace", "diag_embed", "block_diag"]
TOP_LEVEL = TENSOR_METHODS
