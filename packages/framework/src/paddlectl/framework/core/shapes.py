"""Shape rules shared by many ops; dims are ints or symbol names, so the same rules serve tracing."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from .op import Spec


def broadcast_shapes(op: str, *shapes: tuple) -> tuple:
    """NumPy broadcasting over dims that may be symbolic; a symbol broadcasts only with 1 or itself."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        dims = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            raise ShapeError(f"{op}: shapes {' and '.join(str(list(s)) for s in shapes)} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def same_as_first(first: Spec, *rest, **attrs) -> Spec:
    return first


def elementwise(op: str):
    """Rule for a broadcasting elementwise op whose result takes the promoted dtype of its inputs."""

    def infer(*specs: Spec, **attrs) -> Spec:
        dtype = np.result_type(*[s.dtype for s in specs])
        return Spec(broadcast_shapes(op, *[s.shape for s in specs]), dtype)

    return infer


def compare(op: str):
    def infer(*specs: Spec, **attrs) -> Spec:
        return Spec(broadcast_shapes(op, *[s.shape for s in specs]), np.dtype(bool))

    return infer


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ShapeError(f"{op}: axis {axis} is out of range for a tensor of rank {ndim} (valid: {-ndim}..{ndim - 1})")
    return axis % max(ndim, 1)


def normalize_axes(op: str, axis, ndim: int) -> tuple[int, ...] | None:
    """None means all axes; an int or a sequence becomes a sorted tuple of non-negative axes."""
    if axis is None:
        return None
    if isinstance(axis, int | np.integer):
        axis = (int(axis),)
    axes = tuple(sorted({normalize_axis(op, int(a), ndim) for a in axis}))
    return axes
