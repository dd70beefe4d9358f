"""DLPack exchange (``paddle.from_dlpack`` / ``paddle.to_dlpack``, ``Tensor.__dlpack__``): a
tensor shared with NumPy, PyTorch or any DLPack producer without a copy, in both directions.

``from_dlpack`` takes an object with ``__dlpack__`` (an ndarray, a torch tensor) or a capsule
``to_dlpack`` made; the result wraps the producer's memory. Writing into the result through an
op rebinds the result to a new array (a Tensor's in-place ops are functional here), so the
producer sees writes made on its side, not those made through the Tensor.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import DTypeError
from ._util import constant

_CPU = (1, 0)  # DLPack's (kDLCPU, device 0)


class _Capsule:
    """A bare DLPack capsule as the producer object NumPy's ``from_dlpack`` expects."""

    def __init__(self, capsule) -> None:
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return _CPU


def from_dlpack(dlpack) -> Tensor:
    """A Tensor over the memory of a DLPack producer or capsule (no copy)."""
    producer = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    try:
        array = np.from_dlpack(producer)
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        raise DTypeError(f"from_dlpack: cannot read a CPU array from {type(dlpack).__name__} ({exc})") from None
    return constant(array)


def to_dlpack(x):
    """A DLPack capsule over ``x``'s memory (for a consumer's ``from_dlpack``)."""
    return x.numpy().__dlpack__()


def _dlpack(self, stream=None, **kwargs):
    return self.numpy().__dlpack__(**kwargs)


def _install() -> None:
    Tensor.__dlpack__ = _dlpack
    Tensor.__dlpack_device__ = lambda self: _CPU


_install()

TOP_LEVEL = ["from_dlpack", "to_dlpack"]
