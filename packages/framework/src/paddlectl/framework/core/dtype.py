"""Dtypes are NumPy dtypes under Paddle's names, so ``x.dtype == paddle.float32`` and ``'float32'`` both hold."""

from __future__ import annotations

import numpy as np

from ..errors import DTypeError

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")

SUPPORTED = {d.name: d for d in (float16, float32, float64, int8, uint8, int16, int32, int64, bool_)}

_default_float = float32


def convert_dtype(dtype) -> np.dtype:
    """Any spelling a user may pass (``'float32'``, ``paddle.float32``, ``np.float32``, ``float``) as a dtype."""
    if dtype is None:
        return _default_float
    if dtype is float:
        return _default_float
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    if isinstance(dtype, str) and dtype.startswith("paddle."):
        dtype = dtype[len("paddle.") :]
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"unknown dtype {dtype!r}; use one of {', '.join(SUPPORTED)}") from None
    if resolved.name not in SUPPORTED:
        raise DTypeError(f"dtype {resolved.name} is not supported; use one of {', '.join(SUPPORTED)}")
    return resolved


def get_default_dtype() -> str:
    return _default_float.name


def set_default_dtype(dtype) -> None:
    """The dtype that Python floats and creation ops without a dtype become (Paddle: float32)."""
    global _default_float
    resolved = convert_dtype(dtype)
    if resolved.kind != "f":
        raise DTypeError(f"the default dtype must be a float dtype, got {resolved.name}")
    _default_float = resolved


def is_floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def as_array(value, dtype=None) -> np.ndarray:
    """A Python scalar, list or array as an ndarray, with Paddle's default float dtype for floats."""
    if dtype is not None:
        return np.asarray(value, dtype=convert_dtype(dtype))
    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(convert_dtype(None))
    return array
