"""``Tensor.unfold(axis, size, step)`` / ``paddle.unfold``: the windows of ``size`` elements every
``step`` along one axis (Paddle's strided ``unfold``, not ``nn.functional.unfold``'s im2col).

The output has ``axis`` replaced by the window count ``(n - size) // step + 1`` and the window as
a new last dim. Paddle returns a strided view; here the windows are copied (a Tensor owns its
array), so writing into the result does not write into ``x``. The vjp sums each window's
gradient back where it was read (``unfold_windows_grad``), and that op's vjp is ``unfold`` again:
the two are each other's adjoint, so derivatives of any order are these two kernels.
"""

from __future__ import annotations

import numpy as np

from ..core import symbolic
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError


def _count(n, size: int, step: int):
    return (n - size) // step + 1 if isinstance(n, int) else symbolic.simplify(f"({n}-{size})//{step}+1")


def _forward(ctx, x, axis, size, step):
    if x.ndim == 0:
        return np.broadcast_to(x, (size,)).copy()
    count = _count(x.shape[axis], size, step)
    shape = (*x.shape[:axis], count, *x.shape[axis + 1 :], size)
    strides = (*x.strides[:axis], x.strides[axis] * step, *x.strides[axis + 1 :], x.strides[axis])
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False).copy()


def _infer(x: Spec, axis, size, step) -> Spec:
    if not x.shape:
        return Spec((size,), x.dtype)
    shape = x.shape
    return Spec((*shape[:axis], _count(shape[axis], size, step), *shape[axis + 1 :], size), x.dtype)


def _vjp(ctx, g):
    x = ctx.input(0)
    return unfold_grad_op(g, x, **ctx.attrs)


unfold_windows_op = OpDef(
    "unfold_windows",
    _forward,
    _vjp,
    _infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 7, 3)),), {"axis": 1, "size": 3, "step": 2}),
        Sample((rng.standard_normal((9,)),), {"axis": 0, "size": 2, "step": 4}),
    ],
)


def _grad_forward(ctx, g, x, axis, size, step):
    """Each window's gradient added back at the positions it was read from (``x`` gives the shape)."""
    if x.ndim == 0:
        return g.sum().astype(g.dtype)
    out = np.zeros(x.shape, dtype=g.dtype)
    count = g.shape[axis]
    for j in range(size):  # offset j of every window at once: a strided slice of the axis
        index = [slice(None)] * x.ndim
        index[axis] = slice(j, j + step * (count - 1) + 1, step)
        out[tuple(index)] += g[..., j]
    return out


def _grad_infer(g: Spec, x: Spec, axis, size, step) -> Spec:
    return Spec(x.shape, g.dtype)


def _grad_vjp(ctx, gx):
    return unfold_windows_op(gx, **ctx.attrs), None


unfold_grad_op = OpDef(
    "unfold_windows_grad",
    _grad_forward,
    _grad_vjp,
    _grad_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 3, 3, 3)), rng.standard_normal((2, 7, 3))), {"axis": 1, "size": 3, "step": 2})
    ],
)


def unfold(x, axis: int, size: int, step: int, name=None):
    """Windows of ``size`` elements every ``step`` along ``axis``, as a new last dim."""
    for what, value in (("axis", axis), ("size", size), ("step", step)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ShapeError(f"unfold: {what} must be an int, got {value!r}")
    rank = max(x.ndim, 1)
    if not -rank <= axis < rank:
        raise ShapeError(f"unfold: axis {axis} is out of range for a {x.ndim}-D tensor")
    axis = int(axis) % rank
    length = x.shape[axis] if x.ndim else 1
    if step <= 0:
        raise ShapeError(f"unfold: step must be greater than 0, got {step}")
    if size < 0 or (isinstance(length, int) and size > length):
        raise ShapeError(f"unfold: size({size}) must be in [0, shape[axis]] = [0, {length}]")
    return unfold_windows_op(x, axis=axis, size=int(size), step=int(step))


TENSOR_METHODS = ["unfold"]
TOP_LEVEL = ["unfold"]
