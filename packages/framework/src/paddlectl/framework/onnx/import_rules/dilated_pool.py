"""Dilated MaxPool (NCHW) as the elementwise maximum of one strided slice per window tap.

The pooling kernel has no dilation, and a max over a dilated window is the max over its
``kH * kW`` taps, each of which reads the input (padded with -inf) at a fixed offset with the
pool's stride: ``kH * kW`` slices and maximums, exact, for any stride, padding or ceil mode."""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import item

_ALL = ["slice", None, None, None]


def _axis_windows(size: int, kernel: int, stride: int, dilation: int, pads: tuple, a: dict) -> tuple[int, int]:
    """(padding before, output size) along one axis, as ONNX's MaxPool computes them."""
    extent = dilation * (kernel - 1) + 1
    auto = a.get("auto_pad", "NOTSET")
    if auto == "SAME_UPPER":
        out = -(-size // stride)
        return max((out - 1) * stride + extent - size, 0) // 2, out
    if auto == "VALID":
        return 0, (size - extent) // stride + 1
    before, after = pads
    span = size + before + after - extent
    if not a.get("ceil_mode", 0):
        return before, span // stride + 1
    out = -(-span // stride) + 1
    return before, out - 1 if (out - 1) * stride >= size + before else out  # a last window starting in the end pad


def dilated_max_pool(b, x, a: dict) -> list:
    """MaxPool over NCHW ``x`` with ``a``'s kernel, strides, dilations and padding."""
    shape = item(b, x).shape
    if not all(isinstance(d, int) for d in shape[2:]):
        raise ConversionError(f"{b.where()}: dilated max pooling needs fixed spatial sizes, got {list(shape)}")
    kernel, strides, dilations = a["kernel_shape"], a.get("strides", [1, 1]), a["dilations"]
    pads = list(a.get("pads", [0, 0, 0, 0]))
    plan = [_axis_windows(shape[2 + k], kernel[k], strides[k], dilations[k], (pads[k], pads[k + 2]), a)
            for k in range(2)]  # fmt: skip
    if any(out < 1 for _, out in plan):
        raise ConversionError(f"{b.where()}: the dilated window is larger than the padded input {list(shape)}")
    padding = [(0, 0), (0, 0)]
    for k, (before, out) in enumerate(plan):
        needed = (out - 1) * strides[k] + dilations[k] * (kernel[k] - 1) + 1
        padding.append((before, max(needed - shape[2 + k] - before, 0)))
    (padded,) = b.op("pad", [x], pads=tuple(padding), mode="constant", value=-np.inf)
    result = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            spec = [_ALL, _ALL] + [
                ["slice", t * dilations[k], t * dilations[k] + (plan[k][1] - 1) * strides[k] + 1, strides[k]]
                for k, t in ((0, i), (1, j))
            ]
            (tap,) = b.op("getitem", [padded], spec=spec)
            result = tap if result is None else b.op("maximum", [result, tap])[0]
    return [result]
