"""``paddle.finfo`` / ``paddle.iinfo``: machine limits of a dtype, with Paddle's field names."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .core.dtype import convert_dtype, is_floating
from .errors import DTypeError


class finfo:  # noqa: N801 - Paddle's name
    """Limits of a float dtype: bits, eps, min, max, tiny, smallest_normal, resolution, dtype."""

    def __init__(self, dtype) -> None:
        dt = convert_dtype(dtype)
        if not is_floating(dt):
            raise DTypeError(f"paddle.finfo: {dt.name} is not a floating dtype; use paddle.iinfo for integers")
        info = ml_dtypes.finfo(dt)  # NumPy's finfo and bfloat16's
        self.dtype = dt.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.min = float(info.min)
        self.max = float(info.max)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self) -> str:
        return (
            f"paddle.finfo(min={self.min:g}, max={self.max:g}, eps={self.eps:g}, resolution={self.resolution:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, bits={self.bits}, dtype={self.dtype})"
        )


class iinfo:  # noqa: N801 - Paddle's name
    """Limits of an integer dtype: bits, min, max, dtype."""

    def __init__(self, dtype) -> None:
        dt = convert_dtype(dtype)
        if dt.kind not in "iu":
            raise DTypeError(f"paddle.iinfo: {dt.name} is not an integer dtype; use paddle.finfo for floats")
        info = np.iinfo(dt)
        self.dtype = dt.name
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)

    def __repr__(self) -> str:
        return f"paddle.iinfo(min={self.min}, max={self.max}, bits={self.bits}, dtype={self.dtype})"
