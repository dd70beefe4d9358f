"""Matrix products: ``matmul`` with Paddle's transpose flags, batching and 1-D rules, plus dot/bmm/mm."""

from __future__ import annotations

import numpy as np

from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Spec
from ..core.shapes import broadcast_shapes
from ..errors import ShapeError
from ._util import unbroadcast


def _t(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2) if a.ndim >= 2 else a


def _matmul_forward(ctx, x, y, transpose_x=False, transpose_y=False):
    a = _t(x) if transpose_x else x
    b = _t(y) if transpose_y else y
    if a.shape[-1] != b.shape[-2 if b.ndim >= 2 else 0]:
        raise ShapeError(
            f"matmul: the contracted dims differ: x{list(x.shape)} (transpose_x={transpose_x}) and "
            f"y{list(y.shape)} (transpose_y={transpose_y}); x's last dim must equal y's second-to-last"
        )
    ctx.save(a, b)
    return _gemm(a, b)


def _gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b``; a batched ``a`` against a 2-D ``b`` runs as one large GEMM, not one per batch entry."""
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        return (a.reshape(-1, a.shape[-1]) @ b).reshape(*a.shape[:-1], b.shape[-1])
    return np.matmul(a, b)


def _matmul_vjp(ctx, g):
    a, b = ctx.saved
    tx, ty = ctx.attrs.get("transpose_x", False), ctx.attrs.get("transpose_y", False)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = unbroadcast(_gemm(np.ascontiguousarray(g2), _t(b2)), a2.shape).reshape(a.shape)
        ga = _t(ga) if tx else ga
    if ctx.needs_input_grad[1]:
        if b2.ndim == 2 and a2.ndim > 2:
            # Weight gradient of a batched input: one GEMM over all rows instead of a batch of
            # GEMMs summed afterwards.
            gb = (a2.reshape(-1, a2.shape[-1]).T @ g2.reshape(-1, g2.shape[-1])).reshape(b.shape)
        else:
            gb = unbroadcast(np.matmul(_t(a2), g2), b2.shape).reshape(b.shape)
        gb = _t(gb) if ty else gb
    return ga, gb


def _matmul_infer(x: Spec, y: Spec, transpose_x=False, transpose_y=False) -> Spec:
    xs, ys = list(x.shape), list(y.shape)
    if transpose_x and len(xs) >= 2:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if transpose_y and len(ys) >= 2:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    k_x = xs[-1]
    k_y = ys[-2] if len(ys) >= 2 else ys[0]
    if isinstance(k_x, int) and isinstance(k_y, int) and k_x != k_y:
        raise ShapeError(f"matmul: x{xs} and y{ys} have different contracted dims {k_x} and {k_y}")
    batch = broadcast_shapes("matmul", tuple(xs[:-2]), tuple(ys[:-2]))
    rows = (xs[-2],) if len(xs) >= 2 else ()
    cols = (ys[-1],) if len(ys) >= 2 else ()
    return Spec(tuple(batch) + rows + cols, np.result_type(x.dtype, y.dtype))


matmul_op = OpDef("matmul", _matmul_forward, _matmul_vjp, _matmul_infer, OPAQUE)


@lowering("matmul")
def _matmul_lowering(attrs, in_types, out_types):
    """At known shapes (checked once, by the shape rule): the product alone, without the tape's
    context or the per-call check (LeNet at batch 1: three matmuls ~1 us each of ~60 us)."""
    tx, ty = attrs.get("transpose_x", False), attrs.get("transpose_y", False)
    return lambda x, y: _gemm(_t(x) if tx else x, _t(y) if ty else y)


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    """Matrix product with NumPy's batching and 1-D rules; the flags transpose the last two dims first."""
    return matmul_op(x, y, transpose_x=bool(transpose_x), transpose_y=bool(transpose_y))


def mm(input, mat2, name=None):  # noqa: A002 - Paddle's name
    return matmul(input, mat2)


def bmm(x, y, name=None):
    if x.ndim != 3 or y.ndim != 3:
        raise ShapeError(f"bmm: both inputs must be 3-D, got x{x.shape} and y{y.shape}")
    return matmul(x, y)


def dot(x, y, name=None):
    from .reduce import sum as reduce_sum

    return reduce_sum(x * y, axis=-1)


def t(input, name=None):  # noqa: A002
    from .shape import transpose

    if input.ndim < 2:
        return input
    return transpose(input, [1, 0])


TENSOR_METHODS = ["matmul", "mm", "bmm", "dot", "t"]
