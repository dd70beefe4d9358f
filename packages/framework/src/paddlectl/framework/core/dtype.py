"""Dtypes are NumPy dtypes under Paddle's names, so ``x.dtype == paddle.float32`` and ``'float32'`` both hold."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ..errors import DTypeError

float16 = np.dtype("float16")
bfloat16 = np.dtype(ml_dtypes.bfloat16)  # importing ml_dtypes also lets NumPy read the name "bfloat16"
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")

SUPPORTED = {
    d.name: d
    for d in (float16, bfloat16, float32, float64, int8, uint8, int16, int32, int64, bool_, complex64, complex128)
}
LOW_PRECISION = frozenset((float16, bfloat16))
"""The 16-bit floats: stored in 16 bits, computed in float32 by the kernels (``core.dispatch``)."""

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
    return dtype.kind == "f" or dtype == bfloat16  # ml_dtypes' bfloat16 is NumPy kind "V"


def complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype holding ``dtype``'s values: complex128 for float64, else complex64 (Paddle's pairing)."""
    return complex128 if dtype in (float64, complex128) else complex64


def real_of(dtype: np.dtype) -> np.dtype:
    """The float dtype of a complex dtype's parts (a real dtype is its own)."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def as_array(value, dtype=None) -> np.ndarray:
    """A Python scalar, list or array as an ndarray, with Paddle's default float dtype for floats
    (and its complex partner for Python complex numbers)."""
    if dtype is not None:
        return np.asarray(value, dtype=convert_dtype(dtype))
    array = np.asarray(value)
    if not isinstance(value, np.ndarray) and array.dtype in (float64, complex128):
        target = convert_dtype(None)
        array = array.astype(target if array.dtype == float64 else complex_of(target))
    return array


def has_low_precision(arrays) -> bool:
    """Whether an op call's input arrays hold a 16-bit float (its kernels then run in float32)."""
    for a in arrays:
        if a is not None and a.dtype in LOW_PRECISION:
            return True
    return False


def forward_in_float32(forward, ctx, arrays, attrs):
    """Run ``forward`` on 16-bit inputs widened to float32 and round its float32 results back.

    NumPy, BLAS and Numba compute no 16-bit arithmetic of their own, so a CPU low-precision op is
    the float32 op rounded once per output (the numerics of a GPU kernel that accumulates in float32).
    The results stay float32 where Paddle's promotion says so: a float32/float64 input among the
    16-bit ones, two different 16-bit dtypes, or an explicit ``dtype`` attribute (``cast``, ``sum``).
    """
    low = {a.dtype for a in arrays if a is not None and a.dtype in LOW_PRECISION}
    wide = any(a is not None and a.dtype.kind == "f" and a.dtype not in LOW_PRECISION for a in arrays)
    out = forward(
        ctx, *[a.astype(float32) if a is not None and a.dtype in LOW_PRECISION else a for a in arrays], **attrs
    )
    if wide or len(low) != 1 or attrs.get("dtype") is not None:
        return out
    (target,) = low

    def rounded(o):
        return o.astype(target) if o.dtype == float32 else o

    return tuple(map(rounded, out)) if isinstance(out, tuple) else rounded(out)
