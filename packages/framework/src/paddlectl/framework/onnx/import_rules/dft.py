"""ONNX's DFT (opsets 17 and 20: forward/inverse, one-sided, ``dft_length``) as matmuls with
constant cosine/sine matrices.

The framework has no complex dtype, and ONNX carries complex values as a trailing (real, imag)
axis anyway, so a DFT along a fixed-length axis is two real matrix products per output part:
``(re + i im) e^(+-i theta)``. Zero padding or truncation to ``dft_length`` and the one-sided forms
(rfft; irfft with its doubled weights for the bins that stand for two) are folded into the
matrices, built in float64 and cast to the input's dtype."""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import Rule, arg, dtype_of, item, known_list

_ALL = ["slice", None, None, None]


def _matrices(n_in: int, length: int, inverse: bool, onesided: bool) -> tuple:
    """(A_re, B_re, A_im, B_im): out_re = re @ A_re + im @ B_re, out_im = re @ A_im + im @ B_im
    (A_im None for the real-output irfft)."""
    if inverse and onesided:
        k, t = np.arange(n_in)[:, None], np.arange(length)[None, :]
        theta = 2 * np.pi * k * t / length
        weight = np.where((k == 0) | (2 * k == length), 1.0, 2.0) * (k <= length // 2)
        return weight * np.cos(theta) / length, -weight * np.sin(theta) / length, None, None
    m = length // 2 + 1 if onesided else length
    t, k = np.arange(n_in)[:, None], np.arange(m)[None, :]
    theta = 2 * np.pi * t * k / length
    inside = t < length  # samples past dft_length are truncated away
    c, s = np.cos(theta) * inside, np.sin(theta) * inside
    sign, scale = (1.0, 1.0 / length) if inverse else (-1.0, 1.0)
    return c * scale, -sign * s * scale, sign * s * scale, c * scale


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
    dt = dtype_of(b, x)
    perm = [i for i in range(r - 1) if i != axis] + [axis]
    back = list(np.argsort(perm))

    def part(i: int):
        (p,) = b.op("getitem", [x], spec=[_ALL] * (r - 1) + [["int", i]])
        return b.op("transpose", [p], perm=perm)[0]

    parts = [part(0)] + ([part(1)] if shape[-1] == 2 else [])
    mats = _matrices(n_in, length, inverse, onesided)

    def combine(a_mat, b_mat):
        out = b.op("matmul", [parts[0], a_mat.astype(dt)])[0]
        if len(parts) == 2:
            out = b.op("add", [out, b.op("matmul", [parts[1], b_mat.astype(dt)])[0]])[0]
        (out,) = b.op("transpose", [out], perm=back)
        return b.op("getitem", [out], spec=[_ALL] * (r - 1) + [["none"]])[0]

    outs = [combine(mats[0], mats[1])] + ([] if mats[2] is None else [combine(mats[2], mats[3])])
    return outs if len(outs) == 1 else b.op("concat", outs, axis=r - 1)


RULES = {"DFT": Rule(_dft, frozenset({"axis", "inverse", "onesided"}), since=17)}
