"""Matrix functions (``paddle.linalg``): norms, inverse, determinants, solve, and the Cholesky, QR,
SVD and symmetric eigen decompositions, batched over leading dims, with their standard vjps."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, REDUCE, OpDef, Spec
from ..core.shapes import broadcast_shapes, normalize_axes, normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._util import unbroadcast
from .linalg import matmul


def _mT(a: np.ndarray) -> np.ndarray:  # noqa: N802
    return np.swapaxes(a, -1, -2)


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


# ----- inverse, determinants ---------------------------------------------------------------


def _inv_forward(ctx, x):
    _square("inv", x.shape)
    out = _lapack("inv", np.linalg.inv, x).astype(x.dtype, copy=False)
    ctx.save(out)
    return out


def _inv_vjp(ctx, g):
    (out,) = ctx.saved
    return -_mT(out) @ g @ _mT(out)


inv_op = OpDef("inv", _inv_forward, _inv_vjp, _square_infer("inv"), OPAQUE)


def _det_forward(ctx, x):
    _square("det", x.shape)
    out = np.asarray(np.linalg.det(x)).astype(x.dtype, copy=False)
    ctx.save(x, out)
    return out


def _det_vjp(ctx, g):
    x, out = ctx.saved
    return (g * out)[..., None, None] * _mT(_lapack("det", np.linalg.inv, x))


def _batch_infer(op: str, lead=()):
    def infer(x: Spec, **attrs) -> Spec:
        _square(op, x.shape)
        return Spec(tuple(lead) + tuple(x.shape[:-2]), x.dtype)

    return infer


det_op = OpDef("det", _det_forward, _det_vjp, _batch_infer("det"), OPAQUE)


def _slogdet_forward(ctx, x):
    _square("slogdet", x.shape)
    sign, logabs = np.linalg.slogdet(x)
    ctx.save(x)
    return np.stack([sign, logabs]).astype(x.dtype, copy=False)


def _slogdet_vjp(ctx, g):
    (x,) = ctx.saved
    return g[1][..., None, None] * _mT(_lapack("slogdet", np.linalg.inv, x))


slogdet_op = OpDef("slogdet", _slogdet_forward, _slogdet_vjp, _batch_infer("slogdet", (2,)), OPAQUE)


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
    ctx.save(a, a_full, out, vector, b2.shape)
    return out[..., 0] if vector else out


def _solve_vjp(ctx, g):
    a, a_full, out, vector, b_shape = ctx.saved
    g2 = g[..., None] if vector else g
    gb = np.linalg.solve(_mT(a_full), g2)
    ga = unbroadcast(-gb @ _mT(out), a.shape) if ctx.needs_input_grad[0] else None
    gb = unbroadcast(gb, b_shape) if ctx.needs_input_grad[1] else None
    if gb is not None and vector:
        gb = gb[..., 0]
    return ga, gb


def _solve_infer(a: Spec, b: Spec) -> Spec:
    _square("solve", a.shape)
    if len(b.shape) == 1:
        return Spec(tuple(a.shape[:-1]), np.result_type(a.dtype, b.dtype))
    batch = broadcast_shapes("solve", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return Spec(batch + tuple(b.shape[-2:]), np.result_type(a.dtype, b.dtype))


solve_op = OpDef("solve", _solve_forward, _solve_vjp, _solve_infer, OPAQUE)


# ----- decompositions -------------------------------------------------------------------------


def _cholesky_forward(ctx, x, upper=False):
    _square("cholesky", x.shape)
    lower = _lapack("cholesky", np.linalg.cholesky, x).astype(x.dtype, copy=False)
    ctx.save(lower)
    return _mT(lower).copy() if upper else lower


def _phi(m: np.ndarray) -> np.ndarray:
    """Lower triangle with the diagonal halved."""
    out = np.tril(m)
    idx = np.arange(m.shape[-1])
    out[..., idx, idx] *= 0.5
    return out


def _cholesky_vjp(ctx, g):
    (lower,) = ctx.saved
    gl = _mT(g) if ctx.attrs.get("upper", False) else g
    inv_l = np.linalg.inv(lower)
    s = _mT(inv_l) @ _phi(_mT(lower) @ np.tril(gl)) @ inv_l
    return 0.5 * (s + _mT(s))


cholesky_op = OpDef("cholesky", _cholesky_forward, _cholesky_vjp, _square_infer("cholesky"), OPAQUE)


def _qr_forward(ctx, x, mode="reduced"):
    _matrices("qr", x.shape)
    q, r = np.linalg.qr(x, mode="complete" if mode == "complete" else "reduced")
    ctx.save(q, r)
    return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)


def _qr_vjp(ctx, gq, gr):
    q, r = ctx.saved
    m, n = q.shape[-2], r.shape[-1]
    if ctx.attrs.get("mode", "reduced") == "complete" and m > n or m < n:
        raise ValueError(
            f"qr: the gradient is defined for mode='reduced' with rows >= cols; got {m}x{n} matrices in mode "
            f"{ctx.attrs.get('mode')!r}"
        )
    m_ = r @ _mT(gr) - _mT(gq) @ q
    copyltu = np.tril(m_) + _mT(np.tril(m_, -1))
    rhs = gq + q @ copyltu
    return _mT(np.linalg.solve(r, _mT(rhs)))


def _qr_infer(x: Spec, mode="reduced"):
    _matrices("qr", x.shape)
    m, n = x.shape[-2], x.shape[-1]
    k = m if mode == "complete" else (min(m, n) if isinstance(m, int) and isinstance(n, int) else n)
    lead = tuple(x.shape[:-2])
    return Spec(lead + (m, k), x.dtype), Spec(lead + (k, n), x.dtype)


qr_op = OpDef("qr", _qr_forward, _qr_vjp, _qr_infer, OPAQUE)


def _svd_forward(ctx, x, full_matrices=False):
    _matrices("svd", x.shape)
    u, s, vh = _lapack("svd", lambda a: np.linalg.svd(a, full_matrices=full_matrices), x)
    ctx.save(u, s, vh)
    return u.astype(x.dtype, copy=False), s.astype(x.dtype, copy=False), vh.astype(x.dtype, copy=False)


def _svd_vjp(ctx, gu, gs, gvh):
    u, s, vh = ctx.saved
    if ctx.attrs.get("full_matrices", False) and u.shape[-1] != vh.shape[-2]:
        raise ValueError("svd: the gradient is defined for full_matrices=False (or square inputs)")
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    gu, gvh = gu[..., :k], gvh[..., :k, :]
    v, gv = _mT(vh), _mT(gvh)
    uhgu, vhgv = _mT(u) @ gu, _mT(v) @ gv
    s2 = s * s
    e = s2[..., None, :] - s2[..., :, None]
    idx = np.arange(k)
    e[..., idx, idx] = 1
    inner = ((uhgu - _mT(uhgu)) * s[..., None, :] + s[..., :, None] * (vhgv - _mT(vhgv))) / e
    inner[..., idx, idx] = gs
    ga = u @ inner @ vh
    m, n = u.shape[-2], vh.shape[-1]
    if m > k:
        ga = ga + ((gu - u @ uhgu) / s[..., None, :]) @ vh
    if n > k:
        ga = ga + u @ _mT((gv - v @ vhgv) / s[..., None, :])
    return ga


def _svd_infer(x: Spec, full_matrices=False):
    _matrices("svd", x.shape)
    m, n = x.shape[-2], x.shape[-1]
    k = min(m, n) if isinstance(m, int) and isinstance(n, int) else m
    lead = tuple(x.shape[:-2])
    if full_matrices:
        return Spec(lead + (m, m), x.dtype), Spec(lead + (k,), x.dtype), Spec(lead + (n, n), x.dtype)
    return Spec(lead + (m, k), x.dtype), Spec(lead + (k,), x.dtype), Spec(lead + (k, n), x.dtype)


svd_op = OpDef("svd", _svd_forward, _svd_vjp, _svd_infer, OPAQUE)


def _eigh_forward(ctx, x, UPLO="L"):  # noqa: N803 - Paddle's name
    _square("eigh", x.shape)
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    ctx.save(w, v)
    return w.astype(x.dtype, copy=False), v.astype(x.dtype, copy=False)


def _eigh_vjp(ctx, gw, gv):
    w, v = ctx.saved
    diff = w[..., None, :] - w[..., :, None]
    idx = np.arange(w.shape[-1])
    diff[..., idx, idx] = np.inf
    inner = (_mT(v) @ gv) / diff
    inner[..., idx, idx] = gw
    grad = v @ inner @ _mT(v)
    return 0.5 * (grad + _mT(grad))  # Paddle's convention: the gradient of a symmetric input is symmetric


def _eigh_infer(x: Spec, UPLO="L"):  # noqa: N803
    _square("eigh", x.shape)
    return Spec(tuple(x.shape[:-1]), x.dtype), x


eigh_op = OpDef("eigh", _eigh_forward, _eigh_vjp, _eigh_infer, OPAQUE)


def _pinv_forward(ctx, x, rcond=1e-15, hermitian=False):
    _matrices("pinv", x.shape)
    out = np.linalg.pinv(x, rcond=rcond, hermitian=hermitian).astype(x.dtype, copy=False)
    ctx.save(x, out)
    return out


def _pinv_vjp(ctx, g):
    a, p = ctx.saved
    eye_m = np.eye(a.shape[-2], dtype=a.dtype)
    eye_n = np.eye(a.shape[-1], dtype=a.dtype)
    pt, gt = _mT(p), _mT(g)
    return -pt @ g @ pt + (eye_m - a @ p) @ gt @ p @ pt + pt @ p @ gt @ (eye_n - p @ a)


def _pinv_infer(x: Spec, **attrs) -> Spec:
    _matrices("pinv", x.shape)
    return Spec(tuple(x.shape[:-2]) + (x.shape[-1], x.shape[-2]), x.dtype)


pinv_op = OpDef("pinv", _pinv_forward, _pinv_vjp, _pinv_infer, OPAQUE)


# ----- norms ----------------------------------------------------------------------------------


def _p_norm_forward(ctx, x, p=2.0, axis=None, keepdim=False):
    a = np.abs(x)
    if p == np.inf:
        out = np.max(a, axis=axis, keepdims=True) if a.size else np.zeros((1,) * x.ndim, x.dtype)
    elif p == -np.inf:
        out = np.min(a, axis=axis, keepdims=True)
    elif p == 0:
        out = np.sum(a != 0, axis=axis, keepdims=True).astype(x.dtype)
    elif p == 2:
        out = np.sqrt(np.sum(a * a, axis=axis, keepdims=True))
    else:
        out = np.sum(a**p, axis=axis, keepdims=True) ** (1.0 / p)
    out = out.astype(x.dtype, copy=False)
    ctx.save(x, out)
    if keepdim:
        return out
    return out.reshape(()) if axis is None else np.squeeze(out, axis=axis)


def _p_norm_vjp(ctx, g):
    x, out = ctx.saved
    p, axis, keepdim = ctx.attrs.get("p", 2.0), ctx.attrs.get("axis"), ctx.attrs.get("keepdim", False)
    g = g if keepdim else (g.reshape(out.shape))
    if p == 0:
        return np.zeros_like(x)
    if p in (np.inf, -np.inf):
        hit = np.abs(x) == out
        return g * np.sign(x) * hit / np.maximum(np.sum(hit, axis=axis, keepdims=True), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = g * np.sign(x) * np.abs(x) ** (p - 1) / out ** (p - 1)
    return np.where((out == 0) | (x == 0) & (p < 1), 0, grad).astype(x.dtype, copy=False)


def _p_norm_infer(x: Spec, p=2.0, axis=None, keepdim=False) -> Spec:
    axes = range(len(x.shape)) if axis is None else axis
    if keepdim:
        return Spec(tuple(1 if i in axes else d for i, d in enumerate(x.shape)), x.dtype)
    return Spec(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


p_norm_op = OpDef("p_norm", _p_norm_forward, _p_norm_vjp, _p_norm_infer, REDUCE)


def vector_norm(x, p=2.0, axis=None, keepdim=False, name=None, *, dtype=None, out=None):
    """``(sum |x|^p)^(1/p)`` over ``axis`` (all axes when None); p may be inf, -inf or 0."""
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    axes = normalize_axes("vector_norm", axis, x.ndim)
    if dtype is not None:
        x = x.astype(dtype)
    return p_norm_op(x, p=float(p), axis=axes, keepdim=bool(keepdim))


def _two_axes(op: str, axis, ndim: int) -> tuple[int, int]:
    axis = list(axis)
    if len(axis) != 2:
        raise ShapeError(f"{op}: axis must name two dims for a matrix norm, got {axis}")
    a, b = (normalize_axis(op, int(v), ndim) for v in axis)
    if a == b:
        raise ShapeError(f"{op}: the two axes must differ, got {axis}")
    return a, b


def matrix_norm(x, p="fro", axis=(-2, -1), keepdim=False, name=None):
    """Frobenius, nuclear, 1/-1 (max/min column sum), inf/-inf (row sum) or 2/-2 (singular value) norms."""
    from . import reduce
    from .elementwise import abs as ew_abs
    from .math_extra import moveaxis
    from .shape import unsqueeze

    rows, cols = _two_axes("matrix_norm", axis, x.ndim)
    if p == "fro":
        return vector_norm(x, 2.0, [rows, cols], keepdim)
    if p in ("nuc", 2, -2, 2.0, -2.0):
        _, s, _ = svd(moveaxis(x, [rows, cols], [-2, -1]))
        out = reduce.sum(s, -1) if p == "nuc" else (reduce.max(s, -1) if p in (2, 2.0) else reduce.min(s, -1))
        return unsqueeze(out, sorted((rows, cols))) if keepdim else out
    if p in (1, -1, np.inf, -np.inf):
        sum_axis, ext_axis = (rows, cols) if abs(p) == 1 else (cols, rows)
        sums = reduce.sum(ew_abs(x), sum_axis, keepdim=True)
        out = reduce.max(sums, ext_axis, keepdim=True) if p > 0 else reduce.min(sums, ext_axis, keepdim=True)
        return out if keepdim else out.squeeze([rows, cols])
    raise ValueError(f"matrix_norm: p must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")


def norm(x, p=None, axis=None, keepdim=False, out=None, dtype=None, name=None):
    """Paddle's ``paddle.norm``/``paddle.linalg.norm``: a vector norm over one axis (or the flattened
    tensor), or a matrix norm over two axes; ``p`` defaults to 'fro' (2 for vectors)."""
    if dtype is not None:
        x = x.astype(dtype)
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    if isinstance(axis, int):
        axis = [axis]
    if axis is not None and len(axis) == 2 and (isinstance(p, str) or p in (1, -1, 2, -2, np.inf, -np.inf)):
        return matrix_norm(x, "fro" if p is None else p, axis, keepdim)
    if p is None or p == "fro":
        p = 2.0
    if isinstance(p, str):
        raise ValueError(f"norm: p={p!r} needs axis with two dims (a matrix norm)")
    return vector_norm(x, p, axis, keepdim)


# ----- public functions -----------------------------------------------------------------------


def inv(x, name=None):
    return inv_op(x)


def det(x, name=None):
    return det_op(x)


def slogdet(x, name=None):
    """``[sign, log|det|]`` stacked along a new leading dim, as Paddle returns it."""
    return slogdet_op(x)


def solve(x, y, left=True, name=None, *, out=None):
    if left:
        return solve_op(x, y)
    from .shape import transpose

    def mT(t):  # noqa: N802
        perm = list(range(t.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return transpose(t, perm)

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


def matrix_power(x, n, name=None):
    """``x`` multiplied by itself ``n`` times (n < 0: of its inverse), by repeated squaring."""
    from .creation import eye
    from .elementwise import scale

    _square("matrix_power", x.shape)
    if n < 0:
        x, n = inv(x), -n
    if n == 0:
        return scale(x, 0.0) + eye(x.shape[-1], dtype=x.dtype)  # identity, still in the graph (zero gradient)
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def multi_dot(x, name=None):
    """The product of a chain of matrices (first/last may be vectors), left to right."""
    if len(x) < 2:
        raise ValueError(f"multi_dot: needs at least 2 tensors, got {len(x)}")
    out = x[0]
    for t in x[1:]:
        out = matmul(out, t)
    return out


def cond(x, p=None, name=None):
    """Condition number: ``norm(x) * norm(inv(x))``, or the singular-value ratio for p in (None, 2, -2)."""
    from . import reduce

    if p in (None, 2, -2):
        s = svd(x)[1]
        hi, lo = reduce.max(s, -1), reduce.min(s, -1)
        return hi / lo if p in (None, 2) else lo / hi
    return matrix_norm(x, p) * matrix_norm(inv(x), p)


def inverse(x, name=None):
    return inv(x)


# Tensor methods and top-level names as Paddle 3.3.1 has them; everything is in ``paddle.linalg``.
TENSOR_METHODS = [
    "cholesky", "cond", "eigvalsh", "matrix_power", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "inverse",
]  # fmt: skip
TOP_LEVEL = ["cholesky", "eigvalsh", "norm", "inverse"]
LINALG = [
    "inv", "det", "slogdet", "solve", "cholesky", "qr", "svd", "eigh", "eigvalsh", "pinv", "matrix_power",
    "multi_dot", "norm", "vector_norm", "matrix_norm", "cond",
]  # fmt: skip
