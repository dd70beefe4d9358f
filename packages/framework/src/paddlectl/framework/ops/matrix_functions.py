"""The rest of ``paddle.linalg``: matrix_exp (a record: Pade 13 with scaling and squaring, Higham
2005), and compositions of solve, inv, svd, eigh and pinv, so their gradients are those ops':
triangular_solve, cholesky_solve, cholesky_inverse, lstsq, matrix_rank, svdvals, vecdot, cov,
corrcoef and householder_product."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample
from ..core.tensor import Tensor
from ..errors import ConfigError, ShapeError
from . import elementwise as ew
from . import reduce
from ._util import constant
from .lapack import _matrices, _mm, _square, _square_infer, eigh_op, inv_op, mT, pinv_op, solve_op, svd_op
from .shape import concat, reshape, squeeze, tril, triu

_PADE13 = (
    64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
    10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
)  # fmt: skip
_THETA13 = 5.371920351148152  # the 1-norm up to which Pade 13 is exact to double precision


def _expm(a: np.ndarray) -> np.ndarray:
    """exp of a batch of square float64 matrices: scale to norm <= theta13, Pade 13, square back."""
    norm = float(np.abs(a).sum(axis=-2).max()) if a.size else 0.0
    s = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / 2.0**s
    b = _PADE13
    ident = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _matrix_exp_forward(ctx, x):
    _square("matrix_exp", x.shape)
    return _expm(x.astype(np.float64)).astype(x.dtype, copy=False)


def _matrix_exp_vjp(ctx, g):
    """The adjoint of exp at ``A`` applied to ``G`` is the top-right block of
    ``exp([[A^T, G], [0, A^T]])`` (Najfeld and Havel), so the vjp is matrix_exp again."""
    at = mT(ctx.input(0))
    n = at.shape[-1]
    block = concat([concat([at, g], axis=-1), concat([at * 0.0, at], axis=-1)], axis=-2)
    return matrix_exp_op(block)[..., :n, n:]


matrix_exp_op = OpDef(
    "matrix_exp",
    _matrix_exp_forward,
    _matrix_exp_vjp,
    _square_infer("matrix_exp"),
    OPAQUE,
    samples=lambda rng: (
        [Sample((rng.uniform(-1, 1, s),)) for s in ((3, 3), (2, 2, 2))] + [Sample((rng.uniform(-4, 4, (3, 3)),))]
    ),  # past theta13: scaled and squared
)


def matrix_exp(x, name=None):
    """``paddle.linalg.matrix_exp``: the matrix exponential of square matrices."""
    return matrix_exp_op(x)


def _triangle(x: Tensor, upper: bool, unit: bool = False) -> Tensor:
    part = triu(x) if upper else tril(x)
    if not unit:
        return part
    eye = constant(np.eye(x.shape[-1], dtype=x.dtype))
    return part * (1.0 - eye) + eye


def triangular_solve(x, y, upper=True, transpose=False, unitriangular=False, name=None):
    """``paddle.linalg.triangular_solve``: ``op(A) out = y`` with ``A`` the upper or lower triangle of
    ``x`` (its diagonal taken as ones when ``unitriangular``), ``op`` a transpose when asked."""
    a = _triangle(x, bool(upper), bool(unitriangular))
    return solve_op(mT(a) if transpose else a, y)


def cholesky_solve(x, y, upper=False, name=None):
    """``paddle.linalg.cholesky_solve``: ``A out = x`` with ``A = y y^T`` (``y^T y`` when ``upper``)."""
    y = _triangle(y, bool(upper))  # LAPACK reads the factor's triangle only, so only it has a gradient
    a = _mm(y, y, ta=True) if upper else _mm(y, y, tb=True)
    return solve_op(a, x)


def cholesky_inverse(x, upper=False, name=None):
    """``paddle.linalg.cholesky_inverse``: ``(L L^T)^-1`` from the factor ``L`` (``(U^T U)^-1``)."""
    _square("cholesky_inverse", x.shape)
    return inv_op(_mm(x, x, ta=True) if upper else _mm(x, x, tb=True))


def svdvals(x, name=None):
    """``paddle.linalg.svdvals``: the singular values, descending."""
    return svd_op(x)[1]


def vecdot(x, y, axis=-1, name=None):
    """``paddle.linalg.vecdot``: ``sum(x * y)`` along ``axis`` (broadcasting)."""
    return reduce.sum(x * y, axis)


def _scalar(v) -> float | None:
    return None if v is None else float(v.item() if isinstance(v, Tensor) else v)


def matrix_rank(x, tol=None, hermitian=False, atol=None, rtol=None, name=None):
    """``paddle.linalg.matrix_rank``: how many singular values exceed the threshold: ``tol`` when
    given, else ``max(atol, rtol * s_max)`` with ``rtol = eps * max(m, n)`` when neither is given."""
    _matrices("matrix_rank", x.shape)
    s = ew.abs(eigh_op(x)[0]) if hermitian else svd_op(x)[1]
    tol, atol, rtol = _scalar(tol), _scalar(atol), _scalar(rtol)
    if tol is not None:
        threshold = constant(np.asarray(tol, dtype=s.dtype))
    else:
        if rtol is None:
            rtol = 0.0 if atol is not None and atol > 0 else np.finfo(s.dtype).eps * max(x.shape[-2:])
        threshold = ew.BINARY["maximum"](reduce.max(s, -1, keepdim=True) * rtol, float(atol or 0.0))
    return reduce.sum(ew.cast(ew.BINARY["greater_than"](s, threshold), "int64"), -1)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(x, y, rcond=None, driver=None, name=None):
    """``paddle.linalg.lstsq``: ``(solution, residuals, rank, singular_values)`` of ``min ||x s - y||``.
    The solution is ``pinv(x) y``; residuals (squared column norms) exist for tall full-rank ``x``
    and a driver other than gelsy, the rank for every driver but gels, the singular values for
    gelsd and gelss; the others are empty, as Paddle returns them."""
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise ConfigError(f"lstsq: driver must be one of {list(_DRIVERS)} (or None), got {driver!r}")
    m, n = x.shape[-2:]
    if y.ndim < 2 or y.shape[-2] != m:
        raise ShapeError(f"lstsq: y{y.shape} must have x's {m} rows in its second-to-last dim")
    rcond = np.finfo(x.dtype).eps * max(m, n) if rcond is None else float(rcond)
    solution = _mm(pinv_op(x, rcond=rcond, hermitian=False), y)
    rank = matrix_rank(x, rtol=rcond)
    empty = constant(np.zeros(0, dtype=x.dtype))
    full_rank = bool(np.all(rank.numpy() == n))
    residuals = empty
    if m > n and full_rank and driver != "gelsy":
        residuals = reduce.sum(ew.square(_mm(x, solution) - y), -2)
    rank = empty.astype("int64") if driver == "gels" else ew.cast(rank, "int32")  # Paddle's dtypes
    values = svdvals(x) if driver in ("gelsd", "gelss") else empty
    return solution, residuals, rank, values


def householder_product(x, tau, name=None):
    """``paddle.linalg.householder_product``: the first n columns of ``H_1 ... H_k``, with
    ``H_i = I - tau_i v_i v_i^T`` and ``v_i`` column i of x below the diagonal, 1 on it."""
    _matrices("householder_product", x.shape)
    m, n = x.shape[-2:]
    k = tau.shape[-1]
    if not k <= n <= m or tuple(tau.shape[:-1]) != tuple(x.shape[:-2]):
        raise ShapeError(
            f"householder_product: need x[..., m, n] with m >= n >= k and tau[..., k]; got x{x.shape}, tau{tau.shape}"
        )
    v = tril(x, -1) + constant(np.eye(m, n, dtype=x.dtype))
    q = constant(np.broadcast_to(np.eye(m, dtype=x.dtype), (*x.shape[:-2], m, m)).copy())
    for i in range(k):
        vi = v[..., :, i : i + 1]
        q = q - _mm(_mm(q, vi), vi, tb=True) * reshape(tau[..., i], [*tau.shape[:-1], 1, 1])
    return q[..., :, :n]


def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None):
    """``paddle.linalg.cov``: the covariance of the variables (rows, or columns when not ``rowvar``),
    NumPy's formula with frequency and analytic weights; ``ddof=True`` divides by N - 1."""
    if x.ndim > 2:
        raise ShapeError(f"cov: x must be 1-D or 2-D, got x{x.shape}")
    one = x.ndim == 1
    x = reshape(x, [1, -1]) if one else (x if rowvar else mT(x))
    w = None
    for weights, kind in ((fweights, "fweights"), (aweights, "aweights")):
        if weights is not None:
            if weights.ndim != 1 or weights.shape[0] != x.shape[1]:
                raise ShapeError(f"cov: {kind} must be 1-D with {x.shape[1]} entries, got {weights.shape}")
            weights = ew.cast(weights, x.dtype)
            w = weights if w is None else w * weights
    if w is None:
        total = float(x.shape[1])
        centred = x - reduce.mean(x, 1, keepdim=True)
        out = _mm(centred, centred, tb=True) / (total - float(bool(ddof)))
    else:
        total = reduce.sum(w)
        centred = x - reduce.sum(x * w, 1, keepdim=True) / total
        fact = total
        if ddof:
            fact = total - (1.0 if aweights is None else reduce.sum(w * ew.cast(aweights, x.dtype)) / total)
        out = _mm(centred * w, centred, tb=True) / fact
    return squeeze(out) if one else out


def corrcoef(x, rowvar=True, name=None):
    """``paddle.linalg.corrcoef``: Pearson's correlation, ``cov / sqrt(var_i var_j)``, clipped to [-1, 1]."""
    c = cov(x, rowvar)
    if c.ndim == 0:
        return c / c
    d = ew.sqrt(reshape(reduce.sum(c * constant(np.eye(c.shape[-1], dtype=c.dtype)), -1), [-1, 1]))
    return ew.clip((c / d) / mT(d), -1.0, 1.0)


TENSOR_METHODS = ["cov", "corrcoef", "cholesky_solve", "cholesky_inverse", "lstsq", "householder_product"]
TOP_LEVEL = ["vecdot"]
LINALG = [
    "matrix_exp", "triangular_solve", "cholesky_solve", "cholesky_inverse", "svdvals", "vecdot", "matrix_rank",
    "lstsq", "householder_product", "cov", "corrcoef",
]  # fmt: skip
