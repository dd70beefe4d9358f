"""Matrix products: ``matmul`` with Paddle's transpose flags, batching and 1-D rules, plus dot/bmm/mm."""

from __future__ import annotations

import numpy as np

from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..kernels import blas
from .broadcast import sum_to
from .elementwise import conj_if_complex
from .reduce import sum as reduce_sum
from .shape import reshape, transpose


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
    return _gemm(a, b)


def _gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b``; a batched ``a`` against a 2-D ``b`` runs as one large GEMM, not one per batch entry
    (a strided ``a``, such as a gradient arriving through a transpose, is made contiguous first)."""
    if a.ndim > 2 and b.ndim == 2:
        a = np.ascontiguousarray(a)
        return _product(a.reshape(-1, a.shape[-1]), b).reshape(*a.shape[:-1], b.shape[-1])
    return _product(a, b)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``: a 2-D product by ``kernels.blas.matmul`` (its sums independent of the
    machine's load); a batched one on one BLAS thread when each GEMM is below ``blas.SMALL_GEMM_MACS``."""
    if a.ndim == 2 and b.ndim == 2:
        return blas.matmul(a, b)
    rows = a.shape[-2] if a.ndim > 1 else 1
    cols = b.shape[-1] if b.ndim > 1 else 1
    if rows * a.shape[-1] * cols >= blas.SMALL_GEMM_MACS:
        return np.matmul(a, b)
    blas.BLAS_CAP.enter(1)
    try:
        return np.matmul(a, b)
    finally:
        blas.BLAS_CAP.exit()


def _as_matrix(t: Tensor, row: bool) -> Tensor:
    """A 1-D operand as the matrix matmul treats it: a row (x) or a column (y)."""
    return reshape(t, [1, -1] if row else [-1, 1]) if t.ndim == 1 else t


def _fit_operand(grad: Tensor, t: Tensor, t2: Tensor) -> Tensor:
    """A gradient computed for the matrix form ``t2`` summed over broadcast batch dims, in ``t``'s shape."""
    grad = sum_to(grad, t2)
    return reshape(grad, t.shape) if t.ndim == 1 else grad


def _matmul_vjp(ctx, g):
    """With ``C = op(x) @ op(y)``: ``dA = g B^T`` and ``dB = A^T g``, each written as one matmul whose
    transpose flags absorb the transposes, so the vjp is bilinear in (g, x, y) and differentiates again."""
    x, y = ctx.input(0), ctx.input(1)
    tx = ctx.attrs.get("transpose_x", False) and x.ndim > 1
    ty = ctx.attrs.get("transpose_y", False) and y.ndim > 1
    x2, y2 = conj_if_complex(_as_matrix(x, True)), conj_if_complex(_as_matrix(y, False))
    if x.ndim == 1 or y.ndim == 1:  # give g the rows/columns a vector operand dropped
        batch = g.shape[: g.ndim - (x.ndim > 1) - (y.ndim > 1)]
        g = reshape(g, [*batch, x2.shape[-1] if tx else x2.shape[-2], y2.shape[-2] if ty else y2.shape[-1]])
    gx = gy = None
    if ctx.needs_input_grad[0]:
        gx = matmul_op(y2, g, transpose_x=ty, transpose_y=True) if tx else matmul_op(g, y2, transpose_y=not ty)
        gx = _fit_operand(gx, x, x2)
    if ctx.needs_input_grad[1]:
        if y2.ndim == 2 and x2.ndim > 2 and not tx:
            # The weight gradient of a batched input: one GEMM over all rows, not a batch summed after.
            x2, g = reshape(x2, [-1, x2.shape[-1]]), reshape(g, [-1, g.shape[-1]])
        gy = matmul_op(g, x2, transpose_x=True, transpose_y=tx) if ty else matmul_op(x2, g, transpose_x=not tx)
        gy = _fit_operand(gy, y, y2)
    return gx, gy


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


def _matmul_samples(rng):
    def pair(xs, ys, **attrs):
        return Sample((rng.standard_normal(xs), rng.standard_normal(ys)), attrs)

    return [
        pair((3, 4), (4, 5)),
        pair((4, 3), (5, 4), transpose_x=True, transpose_y=True),
        pair((2, 3, 4), (4, 5)),
        pair((2, 3, 4), (5, 4), transpose_y=True),
        pair((2, 4, 3), (1, 4, 5), transpose_x=True),
        pair((4,), (2, 4, 3)),
        pair((2, 3, 4), (4,)),
        pair((4,), (4,)),
    ]


matmul_op = OpDef(
    "matmul",
    _matmul_forward,
    _matmul_vjp,
    _matmul_infer,
    OPAQUE,
    samples=_matmul_samples,
    fresh_output=True,
    items=True,
)


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
    return reduce_sum(x * y, axis=-1)


def t(input, name=None):  # noqa: A002
    if input.ndim < 2:
        return input
    return transpose(input, [1, 0])


TENSOR_METHODS = ["matmul", "mm", "bmm", "dot", "t"]
