"""Creation spellings of Paddle 3.3 beside ops/creation.py: ``paddle.range`` (inclusive end),
``paddle.from_numpy`` and ``paddle.Size``, the tuple of dims Paddle's shapes print as."""

from __future__ import annotations

import math

import numpy as np

from ..core.dtype import convert_dtype, get_default_dtype
from ..errors import ConfigError
from .creation import to_tensor


def _number(v):
    return v.item() if hasattr(v, "item") else v


def range(start=0, end=None, step=1, dtype=None, name=None):  # noqa: A001 - Paddle's name
    """``paddle.range``: ``start, start + step, ...`` up to and including ``end`` (default dtype float)."""
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ConfigError("range: step must not be 0")
    count = max(math.floor((end - start) / step) + 1, 0)
    dtype = convert_dtype(dtype) if dtype is not None else np.dtype(get_default_dtype())
    return to_tensor((start + np.arange(count) * step).astype(dtype))


def from_numpy(ndarray):
    """``paddle.from_numpy``: a tensor of the array's dtype and values."""
    if not isinstance(ndarray, np.ndarray):
        raise ConfigError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    return to_tensor(ndarray)


class Size(tuple):
    """``paddle.Size``: a tuple of dims that prints as Paddle's and counts its elements."""

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for [])."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"paddle.Size({list(self)})"


TOP_LEVEL = ["range", "from_numpy", "Size"]
