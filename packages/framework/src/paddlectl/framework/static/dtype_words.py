"""The IR's spelling of dtypes (``float32`` <-> ``f32``), shared by the IR, its printer and its parser."""

from __future__ import annotations

import numpy as np

_DTYPE_NAMES = {
    "float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
    "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool",
    "complex64": "c64", "complex128": "c128",
}  # fmt: skip
_DTYPES_BY_SHORT = {short: np.dtype(long) for long, short in _DTYPE_NAMES.items()}
DTYPE_WORDS = frozenset(_DTYPE_NAMES.values())


def dtype_short(dtype) -> str:
    """``float32`` -> ``f32``: the IR's spelling of a dtype."""
    name = np.dtype(dtype).name
    if name not in _DTYPE_NAMES:
        raise TypeError(f"IR: dtype {name} has no IR spelling; supported: {sorted(_DTYPE_NAMES)}")
    return _DTYPE_NAMES[name]


def dtype_from_short(short: str) -> np.dtype:
    if short not in _DTYPES_BY_SHORT:
        raise ValueError(f"IR: unknown dtype {short!r}; expected one of {sorted(_DTYPES_BY_SHORT)}")
    return _DTYPES_BY_SHORT[short]
