"""Products built on matmul and broadcasting: the 3-vector cross product (an op whose vjp is two
more cross products), outer/inner/Kronecker products, mv, addmm, tensordot, matrix powers and
chains of matrix products."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.shapes import broadcast_shapes, normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import elementwise as ew
from ._util import tensor_args
from .broadcast import sum_to
from .creation import eye
from .lapack import _square, inv
from .linalg import matmul
from .shape import flatten, reshape, transpose


def _cross_forward(ctx, x, y, axis):
    if x.shape[axis] != 3 or y.shape[axis] != 3:
        raise ShapeError(f"cross: axis {axis} must have size 3 in both inputs, got x{list(x.shape)} y{list(y.shape)}")
    return np.cross(x, y, axis=axis)


def _cross_vjp(ctx, g):
    x, y, axis = ctx.input(0), ctx.input(1), ctx.attrs["axis"]
    gx = sum_to(cross_op(y, g, axis=axis), x) if ctx.needs_input_grad[0] else None
    gy = sum_to(cross_op(g, x, axis=axis), y) if ctx.needs_input_grad[1] else None
    return gx, gy


def _cross_infer(x: Spec, y: Spec, axis) -> Spec:
    return Spec(broadcast_shapes("cross", x.shape, y.shape), np.result_type(x.dtype, y.dtype))


cross_op = OpDef(
    "cross",
    _cross_forward,
    _cross_vjp,
    _cross_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((4, 3)), rng.standard_normal((4, 3))), {"axis": 1}),
        Sample((rng.standard_normal((3, 2)), rng.standard_normal((3, 1))), {"axis": 0}),
    ],
)


def cross(x, y, axis=9, name=None):
    """The 3-vector cross product along ``axis``; Paddle's default 9 means the first dim of size 3."""
    if axis == 9:
        axis = next((i for i, d in enumerate(x.shape) if d == 3), None)
        if axis is None:
            raise ShapeError(f"cross: x{x.shape} has no dim of size 3; pass axis")
    return cross_op(*tensor_args(x, y), axis=normalize_axis("cross", int(axis), x.ndim))


def outer(x, y, name=None, *, out=None):
    return reshape(flatten(x), [-1, 1]) * reshape(flatten(y), [1, -1])


def inner(x, y, name=None):
    """Sum over the last dims: shape ``x.shape[:-1] + y.shape[:-1]``."""
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if x.shape[-1] != y.shape[-1]:
        raise ShapeError(f"inner: the last dims must match, got x{x.shape} and y{y.shape}")
    out = matmul(reshape(x, [-1, x.shape[-1]]), reshape(y, [-1, y.shape[-1]]), transpose_y=True)
    return reshape(out, x.shape[:-1] + y.shape[:-1])


def kron(x, y, name=None):
    """The Kronecker product: every element of ``x`` times a copy of ``y``."""
    nd = max(x.ndim, y.ndim)
    xs, ys = [1] * (nd - x.ndim) + x.shape, [1] * (nd - y.ndim) + y.shape
    xe = reshape(x, [d for a in xs for d in (a, 1)])
    ye = reshape(y, [d for b in ys for d in (1, b)])
    return reshape(xe * ye, [a * b for a, b in zip(xs, ys, strict=True)])


def mv(x, vec, name=None):
    if x.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv: x must be 2-D and vec 1-D, got x{x.shape} and vec{vec.shape}")
    return matmul(x, vec)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002 - Paddle's name
    """``beta * input + alpha * (x @ y)``."""
    return ew.scale(input, float(beta)) + ew.scale(matmul(x, y), float(alpha))


def tensordot(x, y, axes=2, name=None):
    """Contract ``axes`` (the last n of x with the first n of y, or explicit lists) by one matmul."""
    if isinstance(axes, Tensor):
        axes = axes.tolist()
    if isinstance(axes, int):
        ax_x, ax_y = list(range(x.ndim - axes, x.ndim)), list(range(axes))
    elif all(isinstance(a, int) for a in axes):  # one list of axes names the same dims of both
        ax_x, ax_y = list(axes), list(axes)
    else:
        ax_x = [axes[0]] if isinstance(axes[0], int) else list(axes[0])
        ax_y = list(axes[1]) if len(axes) > 1 else list(ax_x)
        # Paddle completes the shorter list with the longer one's entries at the same positions
        ax_x, ax_y = ax_x + ax_y[len(ax_x) :], ax_y + ax_x[len(ax_y) :]
    ax_x = [a % x.ndim for a in ax_x]
    ax_y = [a % y.ndim for a in ax_y]
    free_x = [a for a in range(x.ndim) if a not in ax_x]
    free_y = [a for a in range(y.ndim) if a not in ax_y]
    k = int(np.prod([x.shape[a] for a in ax_x]))
    if k != int(np.prod([y.shape[a] for a in ax_y])):
        raise ShapeError(f"tensordot: contracted dims of x{x.shape} {ax_x} and y{y.shape} {ax_y} differ in size")
    xm = reshape(transpose(x, free_x + ax_x), [-1, k])
    ym = reshape(transpose(y, ax_y + free_y), [k, -1])
    return reshape(matmul(xm, ym), [x.shape[a] for a in free_x] + [y.shape[a] for a in free_y])


def matrix_power(x, n, name=None):
    """``x`` multiplied by itself ``n`` times (n < 0: of its inverse), by repeated squaring."""
    _square("matrix_power", x.shape)
    if n < 0:
        x, n = inv(x), -n
    if n == 0:
        return ew.scale(x, 0.0) + eye(x.shape[-1], dtype=x.dtype)  # identity, still in the graph (zero gradient)
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


TENSOR_METHODS = ["cross", "outer", "inner", "kron", "mv", "addmm", "tensordot", "matrix_power", "multi_dot"]
TOP_LEVEL = ["cross", "outer", "inner", "kron", "mv", "addmm", "tensordot"]
LINALG = ["cross", "matrix_power", "multi_dot"]
