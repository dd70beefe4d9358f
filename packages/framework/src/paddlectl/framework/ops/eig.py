"""The general (non-symmetric) eigen decomposition, ``paddle.linalg.eig``/``eigvals``: LAPACK's
geev through NumPy, batched over leading dims. The results are complex (complex64 from float32 or
complex64 input, complex128 from the 64-bit ones), eigenvectors of unit norm, in LAPACK's order,
as Paddle returns them."""

from __future__ import annotations

import numpy as np

from ..core.dtype import complex_of, is_floating
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import DTypeError
from ._util import constant
from .complex import conj_op, real_op
from .diagonal import diagonal
from .lapack import _lapack, _square, mT, solve_op
from .linalg import matmul_op


def _eig_forward(ctx, x):
    _square("eig", x.shape)
    w, v = _lapack("eig", np.linalg.eig, x)
    out = complex_of(x.dtype)
    return w.astype(out, copy=False), v.astype(out, copy=False)


def _eig_vjp(ctx, gw, gv):
    """The gradient of A = V diag(w) V^-1 (Paddle's and PyTorch's formula; eigenvectors are fixed
    up to a phase, which the real part of diag(V^H gV) removes):
    ``V^-H (diag(gw) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(w_j - w_i)) V^H``, real for a real A."""
    w, v = ctx.output(0), ctx.output(1)
    n = w.shape[-1]
    eye = constant(np.eye(n, dtype=w.dtype))
    vh = conj_op(mT(v))
    vhgv = matmul_op(vh, gv)
    gauge = real_op(diagonal(vhgv, axis1=-2, axis2=-1))
    inner = vhgv - matmul_op(vh, v * gauge.unsqueeze(-2))
    gaps = w.unsqueeze(-2) - w.unsqueeze(-1) + eye
    inner = inner / conj_op(gaps) * (1 - eye) + gw.unsqueeze(-1) * eye
    grad = solve_op(vh, matmul_op(inner, vh))
    return grad if ctx.input(0).dtype.kind == "c" else real_op(grad)


def _eig_infer(x: Spec):
    _square("eig", x.shape)
    out = complex_of(np.dtype(x.dtype))
    return Spec(tuple(x.shape[:-1]), out), Spec(tuple(x.shape), out)


def _eig_samples(rng):
    """Matrices with well separated real eigenvalues (the derivative is singular at a repeated one)."""
    q = rng.uniform(-0.5, 0.5, (3, 3)) + np.eye(3) * 2
    return [Sample((q @ np.diag([1.0, 2.0, 3.5]) @ np.linalg.inv(q),))]


eig_op = OpDef(
    "eig",
    _eig_forward,
    _eig_vjp,
    _eig_infer,
    OPAQUE,
    samples=_eig_samples,
)


def _check(op: str, x) -> None:
    if not (is_floating(x.dtype) or x.dtype.kind == "c") or x.dtype.itemsize < 4:
        raise DTypeError(f"{op}: x must be float32, float64, complex64 or complex128, got {x.dtype.name}")


def eig(x, name=None):
    """Eigenvalues and right eigenvectors ``(w, V)`` of square matrices, ``A V = V diag(w)``, complex."""
    _check("eig", x)
    return eig_op(x)


def eigvals(x, name=None):
    """The eigenvalues of square matrices, complex, in LAPACK's order."""
    _check("eigvals", x)
    return eig_op(x)[0]


LINALG = ["eig", "eigvals"]
TENSOR_METHODS = LINALG
