"""Vector and matrix norms (``paddle.norm``, ``paddle.linalg.*_norm``, ``cond``, ``dist``); the
normalisation layers are ops/norm.py's. ``p_norm`` is the one op: matrix norms compose it, sums,
extrema and singular values."""

from __future__ import annotations

import numpy as np

from ..core.op import REDUCE, OpDef, Sample, Spec
from ..core.shapes import normalize_axes, normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import reduce
from ._util import constant
from .elementwise import abs as ew_abs
from .elementwise import sign
from .lapack import inv, svd
from .rearrange import moveaxis
from .shape import reshape, unsqueeze


def _keepdim_shape(shape, axis) -> list:
    axes = range(len(shape)) if axis is None else axis
    return [1 if i in axes else d for i, d in enumerate(shape)]


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
    if keepdim:
        return out
    return out.reshape(()) if axis is None else np.squeeze(out, axis=axis)


def _p_norm_vjp(ctx, g):
    """``g * sign(x) |x|^(p-1) / ||x||^(p-1)``; 0 where the norm is 0 (and at x = 0 for p < 1);
    the inf-norms share ``g`` among the entries that reach the extremum."""
    x = ctx.input(0)
    p, axis = ctx.attrs.get("p", 2.0), ctx.attrs.get("axis")
    if p == 0:
        return constant(np.zeros(x.shape, x.dtype))
    kept = _keepdim_shape(x.shape, axis)
    g, out = reshape(g, kept), reshape(ctx.output(0), kept)
    if p in (np.inf, -np.inf):  # masks are ops, so a traced gradient computes them from its data
        hit = (ew_abs(x) == out).astype(x.dtype)
        return g * sign(x) * hit / reduce.sum(hit, axis, keepdim=True)
    safe_out = out + (out == 0).astype(x.dtype)  # 1 where the norm is 0: those entries are all 0
    if p == 2:
        return g * x / safe_out
    if p == 1:
        return g * sign(x)
    ax = ew_abs(x)
    if p < 1:
        ax = ax + (x == 0).astype(x.dtype)  # sign(0) = 0 zeroes those entries
    return g * sign(x) * ax ** (p - 1) / safe_out ** (p - 1)


def _p_norm_infer(x: Spec, p=2.0, axis=None, keepdim=False) -> Spec:
    axes = range(len(x.shape)) if axis is None else axis
    if keepdim:
        return Spec(tuple(1 if i in axes else d for i, d in enumerate(x.shape)), x.dtype)
    return Spec(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)


def _p_norm_samples(rng):
    def sample(**attrs):
        x = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))
        return Sample((x,), {"p": 2.0, "axis": None, "keepdim": False, **attrs})

    return [
        sample(),
        sample(axis=(1,)),
        sample(p=1.0, axis=(0,), keepdim=True),
        sample(p=3.0, axis=(1,)),
        sample(p=0.5),
        sample(p=np.inf, axis=(1,)),
        sample(p=-np.inf),
    ]


p_norm_op = OpDef(
    "p_norm",
    _p_norm_forward,
    _p_norm_vjp,
    _p_norm_infer,
    REDUCE,
    samples=_p_norm_samples,
    exempt=reduce.UNFUSED,
)


def vector_norm(x, p=2.0, axis=None, keepdim=False, name=None, *, dtype=None, out=None):
    """``(sum |x|^p)^(1/p)`` over ``axis`` (all axes when None); p may be inf, -inf or 0."""
    if isinstance(axis, Tensor):
        axis = axis.tolist()
    axes = normalize_axes("vector_norm", axis, x.ndim)
    if dtype is not None:
        x = x.astype(dtype)
    if x.dtype.kind == "c":  # the norm of the magnitudes: a real result, as Paddle's
        x = ew_abs(x)
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


def cond(x, p=None, name=None):
    """Condition number: ``norm(x) * norm(inv(x))``, or the singular-value ratio for p in (None, 2, -2)."""
    if p in (None, 2, -2):
        s = svd(x)[1]
        hi, lo = reduce.max(s, -1), reduce.min(s, -1)
        return hi / lo if p in (None, 2) else lo / hi
    return matrix_norm(x, p) * matrix_norm(inv(x), p)


def dist(x, y, p=2, name=None):
    """The p-norm of ``x - y`` over all entries."""
    return vector_norm(x - y, float(p))


TENSOR_METHODS = ["cond", "norm", "dist"]
TOP_LEVEL = ["norm", "dist"]
LINALG = ["norm", "vector_norm", "matrix_norm", "cond"]
