"""Moving, stacking and splitting axes, compositions of the shape ops Paddle also spells other
ways: moveaxis/permute/swapaxes, ravel/unflatten, the stack and split families, narrow, rot90,
broadcasting tensors against each other, meshgrid and cartesian products."""

from __future__ import annotations

import numpy as np

from ..core.shapes import normalize_axis
from ..core.tensor import Tensor
from ..errors import ShapeError
from .shape import concat, expand, flip, reshape, split, stack, transpose, unbind, unsqueeze


def moveaxis(x, source, destination, name=None):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis: source {src} and destination {dst} must have the same length")
    src = [normalize_axis("moveaxis", s, x.ndim) for s in src]
    dst = [normalize_axis("moveaxis", d, x.ndim) for d in dst]
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return transpose(x, perm)


def unflatten(x, axis, shape, name=None):
    axis = normalize_axis("unflatten", int(axis), x.ndim)
    shape = shape.tolist() if isinstance(shape, Tensor) else [int(d) for d in shape]
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = x.shape[axis] // max(known, 1)
    if int(np.prod(shape)) != x.shape[axis]:
        raise ShapeError(f"unflatten: shape {shape} does not multiply to dim {axis} of x{x.shape} ({x.shape[axis]})")
    return reshape(x, x.shape[:axis] + shape + x.shape[axis + 1 :])


def permute(input, *dims):  # noqa: A002
    """``transpose`` taking the order as a list or as separate ints (``x.permute(0, 2, 1)``)."""
    perm = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], list | tuple) else list(dims)
    return transpose(input, perm)


def swapaxes(x, axis0, axis1, name=None):
    perm = list(range(x.ndim))
    perm[axis0], perm[axis1] = perm[axis1], perm[axis0]
    return transpose(x, perm)


swapdims = swapaxes


def ravel(input):  # noqa: A002
    return reshape(input, [-1])


def cat(x, axis=0, name=None, *, out=None):
    return concat(x, axis)


concatenate = cat


def _atleast(n):
    def fn(*inputs, name=None):
        tensors = list(inputs[0]) if len(inputs) == 1 and isinstance(inputs[0], list | tuple) else list(inputs)
        out = []
        for t in tensors:
            if n >= 1 and t.ndim == 0:
                t = reshape(t, [1])
            if n >= 2 and t.ndim == 1:
                t = unsqueeze(t, 0)
            if n >= 3 and t.ndim == 2:
                t = unsqueeze(t, -1)
            out.append(t)
        return out[0] if len(out) == 1 else out

    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def hstack(x, name=None):
    x = atleast_1d(*x)
    x = [x] if isinstance(x, Tensor) else x
    return concat(x, 0 if x[0].ndim == 1 else 1)


def vstack(x, name=None):
    x = atleast_2d(*x)
    return concat([x] if isinstance(x, Tensor) else x, 0)


row_stack = vstack


def dstack(x, name=None):
    x = atleast_3d(*x)
    return concat([x] if isinstance(x, Tensor) else x, 2)


def column_stack(x, name=None):
    return concat([reshape(t, [-1, 1]) if t.ndim <= 1 else t for t in x], 1)


def unstack(x, axis=0, num=None):
    return unbind(x, axis)


def tensor_split(x, num_or_indices, axis=0, name=None):
    """Split into ``n`` near-equal parts (the first ``size % n`` one longer), or at the given indices."""
    axis = int(axis.item()) if isinstance(axis, Tensor) else int(axis)
    size = x.shape[axis]
    if isinstance(num_or_indices, int):
        n = num_or_indices
        if n <= 0:
            raise ValueError(f"tensor_split: the number of sections must be positive, got {n}")
        sections = [size // n + 1] * (size % n) + [size // n] * (n - size % n)
    else:
        bounds = [0] + [min(max(int(i), 0), size) for i in num_or_indices] + [size]
        sections = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return split(x, sections, axis)


def hsplit(x, num_or_indices, name=None):
    return tensor_split(x, num_or_indices, 0 if x.ndim == 1 else 1)


def vsplit(x, num_or_indices, name=None):
    if x.ndim < 2:
        raise ShapeError(f"vsplit: x must have at least 2 dims, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 0)


def dsplit(x, num_or_indices, name=None):
    if x.ndim < 3:
        raise ShapeError(f"dsplit: x must have at least 3 dims, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 2)


def narrow(input, dim, start, length):  # noqa: A002
    """``length`` entries of dim ``dim`` from ``start``."""
    start = int(start.item()) if isinstance(start, Tensor) else int(start)
    size = input.shape[dim]
    start = start + size if start < 0 else start
    if start < 0 or length < 0 or start + length > size:
        raise ShapeError(f"narrow: [{start}, {start + length}) is out of range for dim {dim} of size {size}")
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, start + length)
    return input[tuple(index)]


def broadcast_shape(x_shape, y_shape):
    return list(np.broadcast_shapes(tuple(x_shape), tuple(y_shape)))


def broadcast_tensors(input, name=None):  # noqa: A002
    shape = list(np.broadcast_shapes(*[tuple(t.shape) for t in input]))
    return [expand(t, shape) for t in input]


def rot90(x, k=1, axes=(0, 1), name=None):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first toward the second)."""
    a0, a1 = axes
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, [a0, a1])
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(flip(x, [a1]), perm) if k == 1 else flip(transpose(x, perm), [a1])


def meshgrid(*args, **kwargs):
    """Coordinate grids ('ij' indexing, Paddle's only mode): output ``i`` varies along dim ``i``."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], list | tuple) else list(args)
    shape = [t.size for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = t.size
        out.append(expand(reshape(t, view), shape))
    return out


def cartesian_prod(x, name=None):
    grids = meshgrid(*x)
    return stack([reshape(g, [-1]) for g in grids], 1) if len(x) > 1 else x[0]


TENSOR_METHODS = [
    "moveaxis", "unflatten", "permute", "swapaxes", "swapdims", "ravel", "atleast_1d", "atleast_2d", "atleast_3d",
    "unstack", "tensor_split", "hsplit", "vsplit", "dsplit", "narrow", "broadcast_tensors", "rot90",
]  # fmt: skip
TOP_LEVEL = TENSOR_METHODS + [
    "cat", "concatenate", "hstack", "vstack", "row_stack", "dstack", "column_stack", "broadcast_shape", "meshgrid",
    "cartesian_prod",
]  # fmt: skip
