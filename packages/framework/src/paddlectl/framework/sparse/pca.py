"""``paddle.sparse.pca_lowrank``: Paddle's randomized low-rank SVD (Halko et al.) of a sparse matrix,
centred by a dense matrix of column means that is never added to the sparse one.

The same algorithm as Paddle's (which runs on CUDA only): a Gaussian sketch, ``niter`` power
iterations orthonormalised by QR, then the SVD of the small projected matrix; every product with
the sparse matrix is ``sparse.matmul``, so the result is differentiable in its values."""

from __future__ import annotations

from ..errors import ShapeError
from ..ops.creation import ones, randn
from ..ops.lapack import qr, svd
from ..ops.linalg import matmul as dense_matmul
from ..ops.reduce import sum as dense_sum
from ..ops.shape import transpose as dense_transpose
from .binary import matmul
from .structure import transpose
from .tensor import require_sparse


def _product(a, b, shift):
    """``(a - shift) @ b`` with sparse ``a`` and dense ``shift`` (or none)."""
    out = matmul(a, b)
    return out if shift is None else out - dense_matmul(shift, b)


def _basis(a, a_t, shift, shift_t, q: int, niter: int):
    """An orthonormal [rows of a, q] basis of the range of ``a - shift``."""
    basis = qr(_product(a, randn([a.shape[1], q], a.dtype), shift))[0]
    for _ in range(niter):
        basis = qr(_product(a_t, basis, shift_t))[0]
        basis = qr(_product(a, basis, shift))[0]
    return basis


def _svd_lowrank(x, q: int, niter: int, shift):
    m, n = x.shape
    x_t = transpose(x, [1, 0])
    shift_t = None if shift is None else dense_transpose(shift, [1, 0])
    if m < n or n > q:
        basis = _basis(x_t, x, shift_t, shift, q, niter)
        u, s, vh = svd(_product(x, basis, shift))
        return u, s, dense_matmul(basis, dense_transpose(vh, [1, 0]))
    basis = _basis(x, x_t, shift, shift_t, q, niter)
    u, s, vh = svd(dense_transpose(_product(x_t, basis, shift_t), [1, 0]))
    return dense_matmul(basis, u), s, dense_transpose(vh, [1, 0])


def pca_lowrank(x, q=None, center=True, niter=2, name=None):
    """(U [m, q], S [q], V [n, q]) with ``x - mean ~= U diag(S) V^T``; ``q`` defaults to min(6, m, n).
    Random (Paddle's sketch is ``paddle.randn``): seed with ``paddle.seed`` to repeat a run."""
    require_sparse(x)
    if x.ndim != 2:
        raise ShapeError(f"sparse.pca_lowrank: x must be a 2-D sparse matrix, got shape {x.shape}")
    m, n = x.shape
    q = min(6, m, n) if q is None else int(q)
    if not 0 <= q <= min(m, n) or niter < 0:
        raise ShapeError(f"sparse.pca_lowrank: need 0 <= q <= min(m, n) = {min(m, n)} and niter >= 0, got {q}, {niter}")
    if not center:
        return _svd_lowrank(x, q, niter, None)
    column_means = dense_sum(x.to_dense(), axis=0, keepdim=True) / m
    return _svd_lowrank(x, q, niter, dense_matmul(ones([m, 1], x.dtype), column_means))
