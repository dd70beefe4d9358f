"""Matrix functions LAPACK computes (``paddle.linalg``): inverse, determinants, solve, and the
Cholesky, QR, SVD and symmetric eigen decompositions and the pseudo-inverse, batched over leading
dims. Their vjps are written with these ops and matmul, so inverse, determinants, solve and
Cholesky differentiate again; the decompositions' vjps are first-order only where their own
derivative goes through a degenerate spectrum."""

from __future__ import annotations

import numpy as np

from ..core.dtype import real_of
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import constant
from .broadcast import sum_to
from .elementwise import conj_if_complex
from .linalg import matmul_op
from .shape import reshape, transpose, unbind


def _mT(a: np.ndarray) -> np.ndarray:  # noqa: N802
    return np.swapaxes(a, -1, -2)


def mT(t: Tensor) -> Tensor:  # noqa: N802
    """``t`` with its last two dims swapped, as an op."""
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


def _mm(a: Tensor, b: Tensor, ta: bool = False, tb: bool = False) -> Tensor:
    """``op(a) @ op(b)`` in one op: the vjps' products, transposes folded into the flags."""
    return matmul_op(a, b, transpose_x=ta, transpose_y=tb)


def eye_like(t: Tensor, n: int | None = None) -> Tensor:
    """An identity of ``t``'s dtype, the size of ``t``'s last dim unless ``n`` is given (a constant)."""
    return constant(np.eye(t.shape[-1] if n is None else n, dtype=t.dtype))


def _square(op: str, shape) -> None:
    if len(shape) < 2 or (isinstance(shape[-1], int) and isinstance(shape[-2], int) and shape[-1] != shape[-2]):
        raise ShapeError(f"{op}: expected square matrices [..., n, n], got shape {list(shape)}")


def _matrices(op: str, shape) -> None:
    if len(shape) < 2:
        raise ShapeError(f"{op}: expected matrices [..., m, n] of rank >= 2, got shape {list(shape)}")


def _lapack(op: str, fn, *arrays):
    try:
        return fn(*arrays)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{op}: {exc} (the input is singular or not positive-definite)") from None


def _square_infer(op: str):
    def infer(x: Spec, **attrs) -> Spec:
        _square(op, x.shape)
        return x

    return infer


def _well_conditioned(rng, *batch, n: int = 3) -> np.ndarray:
    """Random float64 matrices near 2I, far from singular, for the conformance sweep."""
    return rng.uniform(-0.5, 0.5, (*batch, n, n)) + 2 * np.eye(n)


def _spd(rng, *batch, n: int = 3) -> np.ndarray:
    """Random symmetric positive-definite float64 matrices with well separated eigenvalues."""
    a = rng.uniform(-0.5, 0.5, (*batch, n, n))
    return a @ _mT(a) + np.diag(np.arange(1.0, n + 1))


_SYMMETRIC_INPUT = {
    "vjp": "reads one triangle of a symmetric input and returns the symmetric gradient (Paddle's convention); "
    "a one-entry finite difference is not a symmetric perturbation (test_linalg_grads checks it symmetrised)",
    "vjp2": "as for vjp",
}


def _one(*arrays, **attrs):
    return Sample(arrays, attrs)


# ----- inverse, determinants ---------------------------------------------------------------


def _inv_forward(ctx, x):
    _square("inv", x.shape)
    return _lapack("inv", np.linalg.inv, x).astype(x.dtype, copy=False)


def _inv_vjp(ctx, g):
    out = conj_if_complex(ctx.output(0))  # -A^-H g A^-H for a complex A (Paddle's convention)
    return -_mm(_mm(out, g, ta=True), out, tb=True)


inv_op = OpDef(
    "inv",
    _inv_forward,
    _inv_vjp,
    _square_infer("inv"),
    OPAQUE,
    samples=lambda rng: [_one(_well_conditioned(rng)), _one(_well_conditioned(rng, 2))],
)


def _det_forward(ctx, x):
    _square("det", x.shape)
    return np.asarray(np.linalg.det(x)).astype(x.dtype, copy=False)


def _matrix_scale(g: Tensor) -> Tensor:
    """A batch of scalars shaped to scale a batch of matrices."""
    return reshape(g, [*g.shape, 1, 1])


def _det_vjp(ctx, g):
    return _matrix_scale(g * conj_if_complex(ctx.output(0))) * conj_if_complex(mT(inv_op(ctx.input(0))))


def _batch_infer(op: str, lead=()):
    def infer(x: Spec, **attrs) -> Spec:
        _square(op, x.shape)
        return Spec(tuple(lead) + tuple(x.shape[:-2]), x.dtype)

    return infer


def _square_samples(rng):
    return [_one(_well_conditioned(rng)), _one(_well_conditioned(rng, 2))]


det_op = OpDef("det", _det_forward, _det_vjp, _batch_infer("det"), OPAQUE, samples=_square_samples)


def _slogdet_forward(ctx, x):
    _square("slogdet", x.shape)
    sign, logabs = np.linalg.slogdet(x)
    return np.stack([sign, logabs]).astype(x.dtype, copy=False)


def _slogdet_vjp(ctx, g):
    _, g_logabs = unbind(g, 0)  # the sign is piecewise constant
    return _matrix_scale(g_logabs) * mT(inv_op(ctx.input(0)))


slogdet_op = OpDef(
    "slogdet",
    _slogdet_forward,
    _slogdet_vjp,
    _batch_infer("slogdet", (2,)),
    OPAQUE,
    samples=_square_samples,
)


# ----- solve ----------------------------------------------------------------------------------


def _solve_forward(ctx, a, b):
    _square("solve", a.shape)
    vector = b.ndim == 1
    b2 = b[:, None] if vector else b
    if a.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"solve: x{list(a.shape)} and y{list(b.shape)}: y's rows must equal x's size {a.shape[-1]}")
    batch = np.broadcast_shapes(a.shape[:-2], b2.shape[:-2])
    a_full = np.broadcast_to(a, batch + a.shape[-2:])
    b_full = np.broadcast_to(b2, batch + b2.shape[-2:])
    out = _lapack("solve", np.linalg.solve, a_full, b_full).astype(np.result_type(a, b), copy=False)
    return out[..., 0] if vector else out


def _solve_vjp(ctx, g):
    """``x = a^-1 b``: ``gb = a^-T g`` (one more solve) and ``ga = -gb x^T``."""
    a, b, out = ctx.input(0), ctx.input(1), ctx.output(0)
    if b.ndim == 1:
        g, out = reshape(g, [-1, 1]), reshape(out, [-1, 1])
    gb = solve_op(mT(a), g)
    ga = sum_to(-_mm(gb, out, tb=True), a) if ctx.needs_input_grad[0] else None
    if not ctx.needs_input_grad[1]:
        return ga, None
    return ga, reshape(gb, b.shape) if b.ndim == 1 else sum_to(gb, b)


def _solve_infer(a: Spec, b: Spec) -> Spec:
    _square("solve", a.shape)
    if len(b.shape) == 1:
        return Spec(tuple(a.shape[:-1]), np.result_type(a.dtype, b.dtype))
    batch = broadcast_shapes("solve", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return Spec(batch + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype))


solve_op = OpDef(
    "solve",
    _solve_forward,
    _solve_vjp,
    _solve_infer,
    OPAQUE,
    samples=lambda rng: [
        _one(_well_conditioned(rng), rng.standard_normal((3, 2))),
        _one(_well_conditioned(rng), rng.standard_normal(3)),
        _one(_well_conditioned(rng, 2), rng.standard_normal((1, 3, 2))),
    ],
)


# ----- decompositions -------------------------------------------------------------------------


def _cholesky_forward(ctx, x, upper=False):
    _square("cholesky", x.shape)
    lower = _lapack("cholesky", np.linalg.cholesky, x).astype(x.dtype, copy=False)
    return _mT(lower).copy() if upper else lower


def _cholesky_vjp(ctx, g):
    """Murray's rule: ``S = L^-T Phi(L^T tril(gL)) L^-1`` symmetrised, Phi the lower triangle
    with the diagonal halved (both masks are constants)."""
    upper = ctx.attrs.get("upper", False)
    out = ctx.output(0)
    lower, gl = (mT(out), mT(g)) if upper else (out, g)
    n = lower.shape[-1]
    tril = constant(np.tri(n, dtype=lower.dtype))
    phi = constant(np.tri(n, dtype=lower.dtype) - 0.5 * np.eye(n, dtype=lower.dtype))
    inv_l = inv_op(lower)
    s = _mm(_mm(inv_l, _mm(lower, gl * tril, ta=True) * phi, ta=True), inv_l)
    return (s + mT(s)) * 0.5


cholesky_op = OpDef(
    "cholesky",
    _cholesky_forward,
    _cholesky_vjp,
    _square_infer("cholesky"),
    OPAQUE,
    samples=lambda rng: [_one(_spd(rng)), _one(_spd(rng, 2), upper=True)],
    exempt=_SYMMETRIC_INPUT,
)


def _qr_forward(ctx, x, mode="reduced"):
    _matrices("qr", x.shape)
    q, r = np.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


def _qr_vjp(ctx, gq, gr):
    q, r = ctx.output(0), ctx.output(1)
    m, n = q.shape[-2], r.shape[-1]
    if ctx.attrs.get("mode", "reduced") == "complete" and m > n or m < n:
        raise ValueError(
            f"qr: the gradient is defined for mode='reduced' with rows >= cols; got {m}x{n} matrices in mode "
            f"{ctx.attrs.get('mode')!r}"
        )
    m_ = _mm(r, gr, tb=True) - _mm(gq, q, ta=True)
    low = constant(np.tri(n, dtype=q.dtype))
    strict = constant(np.tri(n, k=-1, dtype=q.dtype))
    copyltu = m_ * low + mT(m_ * strict)
    rhs = gq + _mm(q, copyltu)
    return mT(solve_op(r, mT(rhs)))


def _qr_infer(x: Spec, mode="reduced"):
    _matrices("qr", x.shape)
    m, n = x.shape[-2], x.shape[-1]
    k = m if mode == "complete" else (min(m, n) if isinstance(m, int) and isinstance(n, int) else n)
    lead = tuple(x.shape[:-2])
    return Spec(lead + (m, k), x.dtype), Spec(lead + (k, n), x.dtype)


qr_op = OpDef(
    "qr",
    _qr_forward,
    _qr_vjp,
    _qr_infer,
    OPAQUE,
    samples=lambda rng: [_one(rng.standard_normal((4, 3))), _one(_well_conditioned(rng, 2))],
)


def _svd_forward(ctx, x, full_matrices=False):
    _matrices("svd", x.shape)
    u, s, vh = _lapack("svd", lambda a: np.linalg.svd(a, full_matrices=full_matrices), x)
    return u.astype(x.dtype, copy=False), s.astype(x.dtype, copy=False), vh.astype(x.dtype, copy=False)


def _svd_vjp(ctx, gu, gs, gvh):
    """The real SVD's vjp (Townsend), with ``1 / (s_j^2 - s_i^2)`` off the diagonal: the singular
    values must be distinct, as for every SVD gradient."""
    u, s, vh = ctx.output(0), ctx.output(1), ctx.output(2)
    if ctx.attrs.get("full_matrices", False) and u.shape[-1] != vh.shape[-2]:
        raise ValueError("svd: the gradient is defined for full_matrices=False (or square inputs)")
    k = s.shape[-1]
    v, gv = mT(vh), mT(gvh)
    uhgu, vhgv = _mm(u, gu, ta=True), _mm(v, gv, ta=True)
    s_row, s_col = reshape(s, [*s.shape[:-1], 1, k]), reshape(s, [*s.shape[:-1], k, 1])
    eye = eye_like(s)
    off = 1 - eye
    s2 = s * s
    e = reshape(s2, [*s.shape[:-1], 1, k]) - reshape(s2, [*s.shape[:-1], k, 1]) + eye
    inner = ((uhgu - mT(uhgu)) * s_row + s_col * (vhgv - mT(vhgv))) / e * off
    inner = inner + reshape(gs, [*gs.shape, 1]) * eye
    ga = _mm(_mm(u, inner), vh)
    m, n = u.shape[-2], vh.shape[-1]
    if m > k:
        ga = ga + _mm((gu - _mm(u, uhgu)) / s_row, vh)
    if n > k:
        ga = ga + _mm(u, (gv - _mm(v, vhgv)) / s_row, tb=True)
    return ga


def _svd_infer(x: Spec, full_matrices=False):
    _matrices("svd", x.shape)
    m, n = x.shape[-2], x.shape[-1]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else m
    lead = tuple(x.shape[:-2])
    if full_matrices:
        return Spec(lead + (m, m), x.dtype), Spec(lead + (k,), x.dtype), Spec(lead + (n, n), x.dtype)
    return Spec(lead + (m, k), x.dtype), Spec(lead + (k,), x.dtype), Spec(lead + (k, n), x.dtype)


def _rectangular_samples(rng):
    return [_one(rng.standard_normal((4, 3))), _one(rng.standard_normal((2, 3, 5)))]


svd_op = OpDef("svd", _svd_forward, _svd_vjp, _svd_infer, OPAQUE, samples=_rectangular_samples)


def _eigh_forward(ctx, x, UPLO="L"):  # noqa: N803 - Paddle's name
    _square("eigh", x.shape)
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return w.astype(real_of(x.dtype), copy=False), v.astype(x.dtype, copy=False)  # Hermitian: real eigenvalues


def _eigh_vjp(ctx, gw, gv):
    """``V (diag(gw) + F * V^T gv) V^T`` with ``F_ij = 1 / (w_j - w_i)`` off the diagonal; made
    symmetric, as Paddle gives a symmetric input's gradient."""
    w, v = ctx.output(0), ctx.output(1)
    n = w.shape[-1]
    eye = eye_like(w)
    diff = reshape(w, [*w.shape[:-1], 1, n]) - reshape(w, [*w.shape[:-1], n, 1]) + eye
    vc = conj_if_complex(v)  # a complex Hermitian input: V^H in place of V^T
    inner = _mm(vc, gv, ta=True) * (1 - eye) / diff + reshape(gw, [*gw.shape, 1]) * eye
    grad = _mm(_mm(v, inner), vc, tb=True)
    return (grad + conj_if_complex(mT(grad))) * 0.5


def _eigh_infer(x: Spec, UPLO="L"):  # noqa: N803
    _square("eigh", x.shape)
    return Spec(tuple(x.shape[:-1]), real_of(np.dtype(x.dtype))), x


eigh_op = OpDef(
    "eigh",
    _eigh_forward,
    _eigh_vjp,
    _eigh_infer,
    OPAQUE,
    samples=lambda rng: [_one(_spd(rng)), _one(_spd(rng, 2), UPLO="U")],
    exempt=_SYMMETRIC_INPUT,
)


def _pinv_forward(ctx, x, rcond=1e-15, hermitian=False):
    _matrices("pinv", x.shape)
    return np.linalg.pinv(x, rcond=rcond, hermitian=hermitian).astype(x.dtype, copy=False)


def _pinv_vjp(ctx, g):
    """Golub and Pereyra's derivative of the pseudo-inverse of a full-rank matrix."""
    a, p = ctx.input(0), ctx.output(0)
    rows = eye_like(a, a.shape[-2]) - _mm(a, p)
    cols = eye_like(a) - _mm(p, a)
    pp_t, pt_p = _mm(p, p, tb=True), _mm(p, p, ta=True)
    return -_mm(_mm(p, g, ta=True), p, tb=True) + _mm(_mm(rows, g, tb=True), pp_t) + _mm(_mm(pt_p, g, tb=True), cols)


def _pinv_infer(x: Spec, **attrs) -> Spec:
    _matrices("pinv", x.shape)
    return Spec(tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2]), x.dtype)


pinv_op = OpDef("pinv", _pinv_forward, _pinv_vjp, _pinv_infer, OPAQUE, samples=_rectangular_samples)


# ----- public functions -----------------------------------------------------------------------


def inv(x, name=None):
    return inv_op(x)


def inverse(x, name=None):
    return inv_op(x)


def det(x, name=None):
    return det_op(x)


def slogdet(x, name=None):
    """``[sign, log|det|]`` stacked along a new leading dim, as Paddle returns it."""
    return slogdet_op(x)


def solve(x, y, left=True, name=None, *, out=None):
    if left:
        return solve_op(x, y)
    return mT(solve_op(mT(x), mT(y)))


def cholesky(x, upper=False, name=None):
    return cholesky_op(x, upper=bool(upper))


def qr(x, mode="reduced", name=None):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    q, r = qr_op(x, mode="reduced" if mode == "r" else mode)
    return r if mode == "r" else (q, r)


def svd(x, full_matrices=False, name=None, *, out=None):
    return svd_op(x, full_matrices=bool(full_matrices))


def eigh(x, UPLO="L", name=None):  # noqa: N803
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return eigh_op(x, UPLO=UPLO)


def eigvalsh(x, UPLO="L", name=None):  # noqa: N803
    return eigh(x, UPLO)[0]


def pinv(x, rcond=1e-15, hermitian=False, name=None):
    if isinstance(rcond, Tensor):
        rcond = rcond.item()
    return pinv_op(x, rcond=float(rcond), hermitian=bool(hermitian))


TENSOR_METHODS = ["cholesky", "eigvalsh", "pinv", "qr", "slogdet", "solve", "inverse"]
TOP_LEVEL = ["cholesky", "eigvalsh", "inverse"]
LINALG = ["inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "eigh", "eigvalsh", "pinv"]
