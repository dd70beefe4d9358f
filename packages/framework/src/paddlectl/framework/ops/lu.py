"""The LU decomposition with partial pivoting (``paddle.linalg.lu``, ``lu_unpack``, ``lu_solve``).

NumPy has no LU, so the factorisation is LAPACK's getrf algorithm on arrays: for each column the
largest remaining entry is the pivot, rows are swapped, and the trailing block is updated. The
output is Paddle's: the packed ``LU`` (unit L below the diagonal, U on and above), 1-based int32
pivots (row ``i`` was swapped with row ``pivots[i] - 1``) and int32 infos (the first zero pivot,
1-based, or 0). The vjp is the one of Walter and Lehmann / PyTorch's ``linalg_lu_backward`` for
square, tall and wide inputs, written with solve, so it differentiates again."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ._util import constant
from .lapack import _matrices, _mm, mT, solve_op
from .shape import concat, tril, triu


def _getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Packed LU, 1-based pivots and infos of a batch of ``[..., m, n]`` matrices."""
    lu = np.array(a, dtype=a.dtype, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    batch = lu.reshape(-1, m, n)
    pivots = np.zeros((batch.shape[0], k), dtype=np.int32)
    infos = np.zeros(batch.shape[0], dtype=np.int32)
    for b, mat in enumerate(batch):
        for j in range(k):
            p = j + int(np.argmax(np.abs(mat[j:, j])))
            pivots[b, j] = p + 1
            if p != j:
                mat[[j, p]] = mat[[p, j]]
            if mat[j, j] == 0:
                infos[b] = infos[b] or j + 1
                continue
            mat[j + 1 :, j] /= mat[j, j]
            mat[j + 1 :, j + 1 :] -= np.outer(mat[j + 1 :, j], mat[j, j + 1 :])
    lead = a.shape[:-2]
    return batch.reshape(a.shape), pivots.reshape(*lead, k), infos.reshape(lead)


def _lu_forward(ctx, x):
    _matrices("lu", x.shape)
    if x.dtype.kind != "f":
        raise ShapeError(f"lu: x must be a float tensor, got {x.dtype}; cast it with .astype('float32')")
    return _getrf(x)


def _permutations(pivots: np.ndarray, m: int) -> np.ndarray:
    """``perm`` per matrix such that ``x[perm] = L U``, from the sequence of row swaps."""
    perm = np.broadcast_to(np.arange(m), (*pivots.shape[:-1], m)).copy()
    flat, piv = perm.reshape(-1, m), pivots.reshape(-1, pivots.shape[-1])
    for row, swaps in zip(flat, piv, strict=True):
        for i, p in enumerate(swaps):
            row[[i, p - 1]] = row[[p - 1, i]]
    return perm


def _permutation_forward(ctx, pivots, m, dtype):
    """``P`` with ``x = P L U``: column ``j`` has its one in row ``perm[j]``."""
    perm = _permutations(pivots, m)
    return (perm[..., None, :] == np.arange(m)[:, None]).astype(dtype)


def _permutation_infer(pivots: Spec, m, dtype) -> Spec:
    return Spec((*pivots.shape[:-1], m, m), np.dtype(dtype))


permutation_op = OpDef(
    "lu_permutation",
    _permutation_forward,
    None,
    _permutation_infer,
    OPAQUE,
    samples=lambda rng: [Sample((np.array([[3, 3], [1, 3]], dtype=np.int32),), {"m": 3, "dtype": "float64"})],
)
"""The permutation matrix of ``lu``'s pivots, an op so a traced program computes it from the pivots."""


def _lu_vjp(ctx, g, *_):
    """PyTorch's ``linalg_lu_backward`` with ``L`` ``[m, k]`` and ``U`` ``[k, n]`` unpacked from
    the output (masks are constants); triangular solves are general solves here."""
    lu, pivots = ctx.output(0), ctx.output(1)
    m, n = lu.shape[-2:]
    k = min(m, n)
    low, up = _unpack_lu(lu, m, n)
    gl, gu = _unpack_grad(g, m, n)
    perm = permutation_op(pivots, m=m, dtype=str(lu.dtype))
    if m == n:
        inner = tril(_mm(low, gl, ta=True), -1) + triu(_mm(gu, up, tb=True))
        grad = _left_solve_t(low, _right_solve_t(up, inner))
    elif m < n:
        u1 = up[..., :, :k]
        inner = tril(_mm(low, gl, ta=True) - _mm(gu, up, tb=True), -1)
        grad = concat([_right_solve_t(u1, inner) + triu(gu[..., :, :k]), gu[..., :, k:]], axis=-1)
        grad = _left_solve_t(low, grad)
    else:
        low1 = low[..., :k, :]
        inner = triu(_mm(gu, up, tb=True) - _mm(low, gl, ta=True))
        grad = concat([_left_solve_t(low1, inner) + tril(gl[..., :k, :], -1), gl[..., k:, :]], axis=-2)
        grad = _right_solve_t(up, grad)
    return _mm(perm, grad)


def _left_solve_t(a, b):
    """``a^-T b``."""
    return solve_op(mT(a), b)


def _right_solve_t(a, b):
    """``b a^-T``."""
    return mT(solve_op(a, mT(b)))


def _unpack_lu(lu, m: int, n: int):
    """Unit-lower ``L`` ``[m, k]`` and upper ``U`` ``[k, n]`` of a packed LU, as ops."""
    k = min(m, n)
    eye = constant(np.eye(m, k, dtype=lu.dtype))
    return tril(lu[..., :, :k], -1) + eye, triu(lu[..., :k, :])


def _unpack_grad(g, m: int, n: int):
    k = min(m, n)
    return tril(g[..., :, :k], -1), triu(g[..., :k, :])


def _lu_infer(x: Spec) -> tuple[Spec, Spec, Spec]:
    _matrices("lu", x.shape)
    m, n = x.shape[-2:]
    k = m if isinstance(m, int) and isinstance(n, int) and m < n else n
    lead = tuple(x.shape[:-2])
    return x, Spec((*lead, k), np.dtype(np.int32)), Spec(lead, np.dtype(np.int32))


lu_op = OpDef(
    "lu",
    _lu_forward,
    _lu_vjp,
    _lu_infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal(s),)) for s in ((3, 3), (2, 4, 3), (3, 5))],
)


def lu(x, pivot=True, get_infos=False, name=None):
    """``paddle.linalg.lu``: ``(LU, pivots)`` or ``(LU, pivots, infos)``; ``x = P L U``."""
    if not pivot:
        raise ShapeError("lu: pivot=False (LU without pivoting) is GPU-only in Paddle; use pivot=True on CPU")
    packed, pivots, infos = lu_op(x)
    return (packed, pivots, infos) if get_infos else (packed, pivots)


def lu_unpack(x, y, unpack_ludata=True, unpack_pivots=True, name=None):
    """``paddle.linalg.lu_unpack``: ``(P, L, U)`` from ``lu``'s packed result and pivots."""
    m, n = x.shape[-2:]
    low, up = _unpack_lu(x, m, n) if unpack_ludata else (None, None)
    perm = permutation_op(y, m=m, dtype=str(x.dtype)) if unpack_pivots else None
    return perm, low, up


def lu_solve(b, lu, pivots, trans="N", name=None):
    """``paddle.linalg.lu_solve``: ``A x = b`` (``trans='T'``: ``A^T x = b``) from ``A``'s LU."""
    if trans not in ("N", "T", "C"):
        raise ShapeError(f"lu_solve: trans must be 'N', 'T' or 'C', got {trans!r}")
    perm, low, up = lu_unpack(lu, pivots)
    if trans == "N":
        return solve_op(up, solve_op(low, _mm(perm, b, ta=True)))
    return _mm(perm, solve_op(mT(low), solve_op(mT(up), b)))


TENSOR_METHODS = ["lu", "lu_unpack"]
LINALG = ["lu", "lu_unpack", "lu_solve"]
