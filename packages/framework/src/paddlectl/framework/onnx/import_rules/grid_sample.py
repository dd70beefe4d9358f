"""GridSample (4-D input, bilinear or nearest, zeros or border padding) as gathers and arithmetic.

The framework has no grid-sampling kernel, but ONNX's definition is a few lines of index math:
grid values in [-1, 1] unnormalised to pixel coordinates (``align_corners`` picks corner or
centre alignment), clamped for border padding, then the pixel at each of the 1 (nearest, ONNX
rounds half to even) or 4 (bilinear) neighbours is gathered from the flattened image and weighted,
out-of-image neighbours counting 0 under zeros padding. Bicubic, reflection padding and 5-D inputs
are refused by name."""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from .base import Rule, dtype_of, item

_ALL = ["slice", None, None, None]
_MODES = {"bilinear": "linear", "linear": "linear", "nearest": "nearest"}


def _check(a: dict, opset: int) -> list[str]:
    problems = []
    if _MODES.get(a.get("mode", "bilinear")) is None:
        problems.append(f"mode={a['mode']!r}: only bilinear/linear and nearest are supported")
    if a.get("padding_mode", "zeros") not in ("zeros", "border"):
        problems.append(f"padding_mode={a['padding_mode']!r}: only zeros and border are supported")
    return problems


def _const(b, x, value):
    return np.asarray(value, dtype_of(b, x))


def _pixels(b, coord, size: int, align: bool, border: bool):
    """Grid values along one axis as pixel coordinates."""
    if align:
        (p,) = b.op("multiply", [b.op("add", [coord, _const(b, coord, 1.0)])[0], _const(b, coord, (size - 1) / 2)])
    else:
        (scaled,) = b.op("multiply", [b.op("add", [coord, _const(b, coord, 1.0)])[0], _const(b, coord, size / 2)])
        (p,) = b.op("subtract", [scaled, _const(b, coord, 0.5)])
    return b.op("clip", [p], min=0.0, max=float(size - 1))[0] if border else p


def _fetch(b, flat, xs, ys, h: int, w: int, channels: int, zeros: bool):
    """The pixels at integer-valued float coordinates ``xs``/``ys`` [N, Ho, Wo] as [N, C, Ho*Wo];
    out-of-image ones are 0 where ``zeros``, else (border: only at weight 0) their clamped pixel."""
    clamped = [b.op("clip", [c], min=0.0, max=float(n - 1))[0] for c, n in ((xs, w), (ys, h))]
    (index,) = b.op("add", [b.op("multiply", [clamped[1], _const(b, xs, w)])[0], clamped[0]])
    (index,) = b.op("cast", [b.op("reshape", [index], shape=(0, 1, -1))[0]], dtype="int64")
    (index,) = b.op("add", [index, np.zeros((1, channels, 1), np.int64)])
    (values,) = b.op("take_along_axis", [flat, index], axis=2)
    if not zeros:
        return values
    inside = None
    for coord, clip in zip((xs, ys), clamped, strict=True):
        (same,) = b.op("equal", [coord, clip])
        inside = same if inside is None else b.op("logical_and", [inside, same])[0]
    (mask,) = b.op("cast", [b.op("reshape", [inside], shape=(0, 1, -1))[0]], dtype=dtype_of(b, flat).name)
    return b.op("multiply", [values, mask])[0]


def _grid_sample(b, node, a, opset):
    x, grid = node.input
    shape, gshape = item(b, x).shape, item(b, grid).shape
    if len(shape) != 4:
        raise ConversionError(f"{b.where()}: only 4-D (N, C, H, W) inputs are supported, got rank {len(shape)}")
    if not all(isinstance(d, int) for d in (*shape[1:], *gshape[1:3])):
        raise ConversionError(f"{b.where()}: needs fixed C, H, W and grid sizes, got {list(shape)} / {list(gshape)}")
    _, channels, h, w = shape
    align, border = bool(a.get("align_corners", 0)), a.get("padding_mode", "zeros") == "border"
    if dtype_of(b, grid) != dtype_of(b, x):
        (grid,) = b.op("cast", [grid], dtype=dtype_of(b, x).name)
    px = _pixels(b, b.op("getitem", [grid], spec=[_ALL, _ALL, _ALL, ["int", 0]])[0], w, align, border)
    py = _pixels(b, b.op("getitem", [grid], spec=[_ALL, _ALL, _ALL, ["int", 1]])[0], h, align, border)
    (flat,) = b.op("reshape", [x], shape=(0, channels, h * w))
    if _MODES[a.get("mode", "bilinear")] == "nearest":
        out = _fetch(b, flat, b.op("round", [px])[0], b.op("round", [py])[0], h, w, channels, not border)
    else:
        x0, y0 = b.op("floor", [px])[0], b.op("floor", [py])[0]
        fx, fy = b.op("subtract", [px, x0])[0], b.op("subtract", [py, y0])[0]
        one = _const(b, px, 1.0)
        x1, y1 = b.op("add", [x0, one])[0], b.op("add", [y0, one])[0]
        columns = ((x0, b.op("subtract", [one, fx])[0]), (x1, fx))
        rows = ((y0, b.op("subtract", [one, fy])[0]), (y1, fy))
        out = None
        for yy, wy in rows:
            for xx, wx in columns:
                (weight,) = b.op("reshape", [b.op("multiply", [wy, wx])[0]], shape=(0, 1, -1))
                (term,) = b.op("multiply", [_fetch(b, flat, xx, yy, h, w, channels, not border), weight])
                out = term if out is None else b.op("add", [out, term])[0]
    return b.op("reshape", [out], shape=(0, channels, gshape[1], gshape[2]))


RULES = {"GridSample": Rule(_grid_sample, frozenset({"align_corners", "mode", "padding_mode"}), since=16, check=_check)}
