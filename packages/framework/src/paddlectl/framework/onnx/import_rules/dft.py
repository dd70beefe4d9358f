"""ONNX's DFT (opsets 17 and 20: forward/inverse, one-sided, ``dft_length``) on the framework's
FFT ops (ops/fft.py), the ones ``paddle.fft`` and ``paddle.signal`` run.

ONNX carries complex values as a trailing (real, imag) axis, so the signal is ``as_complex``'d (or,
with one component, taken as real), zero-padded or truncated to ``dft_length`` along the axis, sent
through ``fft_c2c`` (``fft_r2c`` for a real one-sided forward, ``fft_c2r`` for a one-sided inverse,
whose result is real) with the unscaled forward and ``1/n`` inverse ONNX specifies, and turned back
into pairs (``as_real``) or one component."""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import Rule, arg, dtype_of, item, known_list

_ALL = ["slice", None, None, None]


def _axis(b, node, a, opset: int, r: int) -> int:
    if opset >= 20:
        given = known_list(b, node, 2, "the DFT axis")
        axis = int(given[0]) if given else -2
    else:
        axis = int(a.get("axis", 1))
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis <= r - 2:
        raise ConversionError(f"{b.where()}: axis {axis} is outside the signal axes 0..{r - 2}")
    return axis


def _resized(b, x, axis: int, r: int, size: int, now: int):
    """``x`` zero-padded or truncated to ``size`` entries along ``axis`` (``dft_length``)."""
    if size == now:
        return x
    pads = [[0, 0]] * r
    pads[axis] = [0, size - now]
    return b.op("pad", [x], pads=pads, mode="constant", value=0.0)[0]


def _dft(b, node, a, opset):
    x = node.input[0]
    shape = item(b, x).shape
    r = len(shape)
    axis = _axis(b, node, a, opset, r)
    n_in = shape[axis]
    if not isinstance(n_in, int) or shape[-1] not in (1, 2):
        raise ConversionError(f"{b.where()}: needs a fixed signal length and a last axis of 1 or 2, got {list(shape)}")
    inverse, onesided = bool(a.get("inverse", 0)), bool(a.get("onesided", 0))
    given = known_list(b, node, 1, "the DFT dft_length") if arg(node, 1) else None
    length = int(given[0]) if given else (2 * (n_in - 1) if inverse and onesided else n_in)
    if shape[-1] == 2:
        (signal,) = b.op("as_complex", [x])
    else:
        (signal,) = b.op("getitem", [x], spec=[_ALL] * (r - 1) + [["int", 0]])
    axes, norm = [axis], "backward"  # ONNX: the forward unscaled, the inverse by 1/n
    complex_dtype = "complex128" if np.dtype(dtype_of(b, x)) == np.float64 else "complex64"
    if inverse and onesided:
        if shape[-1] == 1:
            (signal,) = b.op("cast", [signal], dtype=complex_dtype)
        signal = _resized(b, signal, axis, r - 1, length // 2 + 1, n_in)
        (out,) = b.op("fft_c2r", [signal], axes=axes, norm=norm, forward=False, last_dim_size=length)
        return b.op("unsqueeze", [out], axes=[r - 1])
    signal = _resized(b, signal, axis, r - 1, length, n_in)
    if shape[-1] == 1 and onesided:
        (out,) = b.op("fft_r2c", [signal], axes=axes, norm=norm, forward=True, onesided=True)
    else:
        if shape[-1] == 1:
            (signal,) = b.op("cast", [signal], dtype=complex_dtype)
        (out,) = b.op("fft_c2c", [signal], axes=axes, norm=norm, forward=not inverse)
        if onesided:
            out = _resized(b, out, axis, r - 1, length // 2 + 1, length)
    return b.op("as_real", [out])


RULES = {"DFT": Rule(_dft, frozenset({"axis", "inverse", "onesided"}), since=17)}
