"""A tensor's elements read as a storage: ``paddle.as_strided`` (a window of ``shape`` with element
``stride`` from a byte ``offset`` into the flattened tensor), ``Tensor.set_`` (become another tensor, or
such a window of it) and ``Tensor.resize_`` (the storage cut or extended to a new shape).

Paddle returns views sharing memory; here a window is copied out (a Tensor owns its array), except
``set_(source)`` with no shape, which shares ``source``'s array as Paddle does. The vjp of a window
adds each element's gradient back where it was read (``as_strided_grad``, whose vjp is the window
again).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ._util import constant
from .inplace import overwrite


def _positions(shape, stride, offset) -> np.ndarray:
    """The flat index each output element reads."""
    index = np.full(tuple(shape), offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(shape, stride, strict=True)):
        index += (np.arange(n) * s).reshape([n if i == axis else 1 for i in range(len(shape))])
    return index


def _forward(ctx, x, shape, stride, offset):
    return np.ascontiguousarray(x).reshape(-1)[_positions(shape, stride, offset)]


def _infer(x: Spec, shape, stride, offset) -> Spec:
    return Spec(tuple(shape), x.dtype)


def _vjp(ctx, g):
    return as_strided_grad_op(g, ctx.input(0), **ctx.attrs)


as_strided_op = OpDef(
    "as_strided",
    _forward,
    _vjp,
    _infer,
    OPAQUE,
    samples=lambda rng: [Sample((rng.standard_normal((2, 4, 6)),), {"shape": (8, 3), "stride": (6, 2), "offset": 1})],
)


def _grad_forward(ctx, g, x, shape, stride, offset):
    out = np.zeros(x.size, dtype=g.dtype)
    np.add.at(out, _positions(shape, stride, offset), g)  # an element read twice gets both gradients
    return out.reshape(x.shape)


def _grad_vjp(ctx, gx):
    return as_strided_op(gx, **ctx.attrs), None


as_strided_grad_op = OpDef(
    "as_strided_grad",
    _grad_forward,
    _grad_vjp,
    lambda g, x, shape, stride, offset: Spec(x.shape, g.dtype),
    OPAQUE,
    samples=lambda rng: [
        Sample(
            (rng.standard_normal((8, 3)), rng.standard_normal((2, 4, 6))),
            {"shape": (8, 3), "stride": (6, 2), "offset": 1},
        )
    ],
)


def _window(x, shape, stride, offset_bytes):
    """The window op; ``offset_bytes`` is Paddle's offset into the storage, in bytes."""
    shape, stride = [int(d) for d in shape], [int(s) for s in stride]
    if len(shape) != len(stride) or any(d < 0 for d in shape) or any(s < 0 for s in stride) or offset_bytes < 0:
        raise ShapeError(
            f"as_strided: shape {shape} and stride {stride} must have the same length and no negative entry, "
            f"offset {offset_bytes} must be >= 0"
        )
    offset, rest = divmod(int(offset_bytes), x.dtype.itemsize)
    if rest:
        raise ShapeError(
            f"as_strided: offset is in bytes and must be a multiple of the {x.dtype.itemsize}-byte {x.dtype.name} "
            f"element, got {offset_bytes}"
        )
    last = offset + sum((d - 1) * s for d, s in zip(shape, stride, strict=True)) if all(shape) else offset - 1
    if last >= x.size:
        raise ShapeError(
            f"as_strided: shape {shape}, stride {stride} and offset {offset_bytes} bytes read element {last} of a "
            f"tensor of {x.size} elements (Paddle would read past the end)"
        )
    return as_strided_op(x, shape=tuple(shape), stride=tuple(stride), offset=int(offset))


def as_strided(x, shape, stride, offset: int = 0, name=None):
    """The elements of flattened ``x`` at ``offset / itemsize + sum(i_k * stride[k])``, in ``shape``
    (``offset`` in bytes, as Paddle's)."""
    return _window(x, shape, stride, offset)


def set_(self, source=None, shape=None, stride=None, offset: int = 0, name=None):
    """``self`` becomes ``source`` (sharing its array), or a window of it (``shape``, ``stride``
    contiguous by default, ``offset`` in bytes); with no source, an empty tensor of its dtype."""
    if source is None:
        return overwrite(self, constant(np.zeros((0,), dtype=self.dtype)))
    if shape is None:
        return overwrite(self, source)
    shape = [int(d) for d in shape]
    stride = stride if stride is not None else [math.prod(shape[i + 1 :]) for i in range(len(shape))]
    return overwrite(self, _window(source, shape, stride, offset))


def resize_(self, shape, fill_zero: bool = False, name=None):
    """``self``'s elements in order, cut or extended with zeros to ``shape``; not differentiable
    (a new storage, as in Paddle)."""
    shape = [int(d) for d in shape]
    if any(d < 0 for d in shape):
        raise ShapeError(f"resize_: shape {shape} has a negative dim")
    flat = self.numpy().reshape(-1)[: math.prod(shape)]
    grown = np.zeros(math.prod(shape), dtype=self.dtype)
    grown[: flat.size] = flat
    return overwrite(self, constant(grown.reshape(shape)))


def _is_shared_buffer_with(self, other) -> bool:
    return bool(np.shares_memory(self.numpy(), other.numpy()))


TENSOR_METHODS = ["as_strided", "set_", "resize_", "_is_shared_buffer_with"]
TOP_LEVEL = ["as_strided"]
