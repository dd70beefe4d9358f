"""Convolution at inference: ``conv2d``'s fixed-shape lowering and the ops inference passes make.

* ``conv2d`` at known shapes: checks and geometry once; planes of at most 4 outputs as one GEMM per
  kernel tap over the outputs it reaches, everything else ``kernels.conv_select.forward``;
* ``conv2d_winograd`` (the ``winograd`` pass): Winograd F(2x2, 3x3), in chunks of images (on one
  thread also for large images and few output channels, in chunks of tile rows);
* ``conv2d_scaled`` (the ``fold_channel_scale`` pass): a 1x1 conv of a per-channel-scaled input.

None of these has a gradient: they serve predictors and loaded models, whose weights are constants.
"""

from __future__ import annotations

import numpy as np

from ..core import items as item_rules
from ..core.lowering import lowering
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import winograd
from ..kernels.background import with_reference
from ..kernels.blas import BLAS_CAP
from ..kernels.conv_select import (
    PIXELS_MIN_WIDTH,
    PerWeight,
    forward,
    pixel_conv,
    pixels_pay,
    reference_forward,
    threaded,
)
from ._window import out_size
from .conv import _add_bias, _conv_geometry

# ----- conv2d at known shapes ----------------------------------------------------------------------

_TAP_GEMMS_MAX_OUTPUTS = 4
"""Stride-1 convolutions with at most this many output pixels per image (ResNet18's layer4 on 64x64
inputs: 2x2) run at known shapes as one GEMM per kernel tap over only the outputs that tap reaches
(``_tap_gemms``): a padded 3x3 kernel on a 2x2 plane reaches 16 of its 36 (tap, output) pairs, and
columns would multiply the other 20 zeros as well. Measured, one thread, 512 channels: batch 16
1.83 against 3.86 ms, batch 1 0.38 against 0.78 ms; 256 channels at batch 16 0.32 against 1.03."""


def _tap_gemms_pay(w_shape, stride, dil, groups, outs) -> bool:
    plain = tuple(stride) == (1, 1) and tuple(dil) == (1, 1) and groups == 1
    return plain and outs[0] * outs[1] <= _TAP_GEMMS_MAX_OUTPUTS and w_shape[2] * w_shape[3] > 1


def _tap_gemms(x, taps, pads, outs):
    """Stride-1 convolution with the weight tap-major (``taps`` [kh, kw, O, C]): the input laid out
    as [C, H*W*N], each tap adds its [O, C] GEMM over the run of outputs it reaches (one run per
    output row, or one for all rows where the tap keeps whole rows), so padding costs nothing."""
    n, c, h, w = x.shape
    kh, kw, o, _ = taps.shape
    oh, ow = outs
    columns = np.ascontiguousarray(x.transpose(1, 2, 3, 0)).reshape(c, h * w * n)
    out = np.zeros((o, oh * ow * n), dtype=x.dtype)
    product = np.empty_like(out)
    for i, j in np.ndindex(kh, kw):
        dy, dx = i - pads[0], j - pads[2]
        y0, y1, x0, x1 = max(0, -dy), min(oh, h - dy), max(0, -dx), min(ow, w - dx)
        if y0 >= y1 or x0 >= x1:
            continue
        whole_rows = (x0, x1) == (0, ow) and w == ow
        for y, rows in [(y0, y1 - y0)] if whole_rows else [(y, 1) for y in range(y0, y1)]:
            size, src, dst = rows * (x1 - x0) * n, ((y + dy) * w + x0 + dx) * n, (y * ow + x0) * n
            np.matmul(taps[i, j], columns[:, src : src + size], out=product[:, :size])
            out[:, dst : dst + size] += product[:, :size]
    return np.ascontiguousarray(out.reshape(o, oh, ow, n).transpose(3, 0, 1, 2))


_TAP_MAJOR = PerWeight(lambda w: np.ascontiguousarray(w.transpose(2, 3, 0, 1)))
"""Each read-only weight's tap-major copy, shared by every input shape's lowering (a model fed many
image sizes keeps one, not one per size)."""


def _tap_major(w: np.ndarray) -> np.ndarray:
    """A conv weight as [kh, kw, O, C] (each tap's [O, C] matrix contiguous for its GEMM)."""
    return _TAP_MAJOR(w)


def _lowered_forward(w_shape, stride, pads, dil, groups, outs):
    """``run(x, w)`` for an NCHW convolution at known shapes: tap GEMMs where they pay, else ``conv_select.forward``."""
    if _tap_gemms_pay(w_shape, stride, dil, groups, outs):
        return lambda x, w: _tap_gemms(x, _tap_major(w), pads, outs)
    return lambda x, w: forward(x, w, stride, pads, dil, groups, outs)[0]


@lowering("conv2d")
def _conv2d_lowering(attrs, in_types, out_types):
    """NCHW at known shapes: checks, geometry (padding rules, output size) and the path done once; a
    run is that path (``_lowered_forward``) and the bias."""
    (x_shape, _), (w_shape, _) = in_types[:2]
    if attrs["data_format"] != "NCHW":
        return None
    stride, groups = attrs["stride"], attrs["groups"]
    pads, dil, outs = _conv_geometry(x_shape, w_shape, stride, attrs["padding"], attrs["dilation"], "NCHW")
    run = _lowered_forward(w_shape, stride, pads, dil, groups, outs)
    return lambda x, w, bias: _add_bias(run(x, w), bias, "NCHW")


# ----- conv2d_winograd (inference only: made by the ``winograd`` pass) ------------------------------

_WINOGRAD_MIN_TILES = 4
_WINOGRAD_MAX_BYTES = 16 << 20
_WINOGRAD_MIN_OUT = 32
"""Winograd F(2x2, 3x3) pays from this many 2x2 output tiles per image (4x4 planes), while one
image's transformed input (16x its tiles' channels) stays under ``_WINOGRAD_MAX_BYTES``, for layers
with at least ``_WINOGRAD_MIN_OUT`` outputs (shorter GEMMs gain little from a second BLAS thread,
where the direct kernel's bands split evenly). Measured on one thread against columns + GEMM:
ResNet18's 64-channel 16x16 convs 0.09-0.12 vs 0.19-0.22 ms at batch 1 and 2.1-2.6 vs 2.6-2.8 ms at
batch 16, its 128-channel 8x8 ones 0.12-0.14 vs 0.26-0.31 ms and 1.6-2.3 vs 2.7 ms, its 256-channel
4x4 ones 0.13-0.18 vs 0.22 ms and 2.1-2.5 vs 2.3-2.5 ms; on 2x2 planes (one tile) it is slower (0.69
vs 0.56 ms). Past 32 MB (``core.allocator``'s mmap threshold) every call's fresh buffer costs its
page faults: a [1, 96, 184, 184] input took 28 ms to transform whole, against 1.9 ms at 92x92.

On one thread the other sizes run in chunks of tile rows (``_winograd_rows``) instead, which bounds
the buffer: against the direct kernel (CPU ms, 2026-12-06) PP-OCR det's 96 -> 24 3x3 conv at 184x184
15.4 vs 30.3, 24 -> 24 at 368x368 20.1 vs 32.1, 96 -> 16 at 184x184 13.2 vs 22.3, 16 -> 16 at 368x368
11.6 vs 14.9, 48 -> 16 at 92x92 1.6 vs 2.6 (onnxruntime's whole 96 -> 24 conv: 16.3)."""

_WINOGRAD_CHUNK_BYTES = 512 << 10
"""A batch is transformed, multiplied and transformed back a chunk of images at a time, each
chunk's transformed input about this size, so it and the GEMMs' result are still in the core's
cache when the next step reads them. Batch 16, one thread, in-process A/B (ms): 64 channels at
16x16 1.56 against 2.05 whole, at 32x32 6.4 against 8.7; 128 channels at 8x8 and 256 at 4x4 equal
within noise (their 1-4 MB transformed filters are re-read per chunk). 256 KB and 1-2 MB chunks
were slower or equal."""

_WINOGRAD_ROW_CHUNK_BYTES = 2 << 20
_WINOGRAD_MIN_ROWS = 4
"""Tile rows per chunk of ``_winograd_rows``: as many as keep the chunk's transformed input near
2 MB, at least 4 (one or two rows a chunk make the 16 GEMMs too short: 96 -> 24 at 184x184 took
18.7 ms in chunks of one tile row, 13.7 of two, 15.4 of four, 17.3 of eight)."""


def _winograd_pays(x_shape, outs, out_channels: int) -> bool:
    """Whether the whole-image Winograd pays at any thread count (see ``_WINOGRAD_MIN_TILES``)."""
    th, tw = winograd.tiles(*outs)
    small = 16 * x_shape[1] * th * tw * 4 <= _WINOGRAD_MAX_BYTES
    return th * tw >= _WINOGRAD_MIN_TILES and small and out_channels >= _WINOGRAD_MIN_OUT


def _rows_pay(outs) -> bool:
    """Whether Winograd in tile-row chunks pays on one thread: any size with a few tile rows."""
    th, tw = winograd.tiles(*outs)
    return th >= 2 and th * tw >= _WINOGRAD_MIN_TILES


def _pixels_first(x, w, outs) -> bool:
    """``conv_select``'s pixel tiles beat Winograd wherever they apply on more than one thread (ms on
    two threads: ResNet's 64 -> 64 at 56x56 1.1 vs 1.5, 128 -> 128 at 28x28 batch 8 8.7 vs 9.8,
    PP-OCRv4 det's 96 -> 24 at 80x160 2.1 vs 4.5), and on one thread for layers with fewer than
    ``_WINOGRAD_MIN_OUT`` outputs (96 -> 24 at 80x160 4.9 vs 5.5 in tile-row chunks, 16 -> 16 at
    368x368 7.4 vs 11.6); narrower rows (but see ``_joined_first``), and wider layers on one thread,
    keep Winograd."""
    few = w.shape[0] < _WINOGRAD_MIN_OUT
    return (few or threaded()) and outs[1] >= PIXELS_MIN_WIDTH and pixels_pay(x, w, (1, 1), (1, 1), 1, outs)


_JOINED_MIN_PIXELS = 36
_JOINED_WINOGRAD_MIN_OUT = 64
_JOINED_WINOGRAD_MIN_PIXELS = 65
"""On more than one thread, rows narrower than the pixel tiles' width also run as pixel tiles (each
band joined into one long row: ``pixel_tiles.JOINED_WASTE``) from ``_JOINED_MIN_PIXELS`` output
pixels, except layers with ``_JOINED_WINOGRAD_MIN_OUT`` outputs and more than 8x8 pixels. Two
threads, ms, against Winograd: ResNet's 512 -> 512 at 7x7 1.03 vs 1.26 (in ResNet-50: 1.8 vs 2.3),
128 -> 128 at 8x8 0.11 vs 0.16, DenseNet's 128 -> 32 at 14x14 0.10 vs 0.18, PP-OCRv4 det's
96 -> 24 at 20x40 0.21 vs 0.27; Winograd kept: 256 -> 256 at 4x4 0.34 vs 0.26, at 14x14 1.13 vs
1.00 (in ResNet-50: 1.44 vs 1.33)."""


def _joined_first(x, w, outs) -> bool:
    """Whether pixel tiles in joined rows run this narrow layer (see ``_JOINED_MIN_PIXELS``)."""
    pixels = outs[0] * outs[1]
    wide = w.shape[0] >= _JOINED_WINOGRAD_MIN_OUT and pixels >= _JOINED_WINOGRAD_MIN_PIXELS
    narrow = outs[1] < PIXELS_MIN_WIDTH and pixels >= _JOINED_MIN_PIXELS and not wide
    return narrow and threaded() and x.dtype == np.float32 and w.dtype == np.float32


def _winograd_conv(x, w, u, padding, outs, plain=None):
    """A 3x3 stride-1 conv given its filters ``w`` and their transform ``u`` [16, O, C]: Winograd
    where that pays at this size and thread count, else ``plain(x, w)`` (by default
    ``kernels.conv_select.forward``)."""
    if _joined_first(x, w, outs):
        return pixel_conv(x, w, (1, 1), padding, outs)
    if not _pixels_first(x, w, outs):
        if _winograd_pays(x.shape, outs, w.shape[0]):
            return _transformed(x, w, u, padding, outs)
        if _rows_pay(outs) and not threaded():
            return _transformed(x, w, u, padding, outs, by_rows=True)
    return plain(x, w) if plain is not None else forward(x, w, (1, 1), padding, (1, 1), 1, outs)[0]


def _plain(x, w, u, padding, outs, by_rows=False):
    """The convolution Winograd computes, by ``conv_select``'s NumPy reference (``kernels.background``)."""
    return reference_forward(x, w, (1, 1), padding, (1, 1), 1, outs)[0]


@with_reference(_plain)
def _transformed(x, w, u, padding, outs, by_rows=False):
    """Winograd over whole images, or (``by_rows``) in chunks of tile rows; ``w`` serves the reference."""
    return (_winograd_rows if by_rows else _winograd)(x, u, padding, outs)


def _winograd(x, u, padding, outs):
    """Input transform, 16 GEMMs, output transform, a chunk of images at a time."""
    th, tw = winograd.tiles(*outs)
    x = np.ascontiguousarray(x)
    n, c = x.shape[:2]
    out = np.empty((n, u.shape[1], *outs), dtype=x.dtype)
    per = max(1, _WINOGRAD_CHUNK_BYTES // (16 * c * th * tw * x.itemsize))
    for b in range(0, n, per):
        _winograd_block(x[b : b + per], u, padding[0], padding[2], th, tw, out[b : b + per])
    return out


def _winograd_rows(x, u, padding, outs):
    """``_winograd`` an image and a chunk of tile rows at a time (their input rows, top padding
    only for the first chunk; rows past the image read as zeros), the buffer bounded whatever the
    image size."""
    th, tw = winograd.tiles(*outs)
    x = np.ascontiguousarray(x)
    n, c, h = x.shape[:3]
    pt = padding[0]
    out = np.empty((n, u.shape[1], *outs), dtype=x.dtype)
    rows = max(_WINOGRAD_MIN_ROWS, _WINOGRAD_ROW_CHUNK_BYTES // (16 * c * tw * x.itemsize))
    for b in range(n):
        for ty0 in range(0, th, rows):
            ty1 = min(th, ty0 + rows)
            first = 2 * ty0 - pt  # the chunk's first input row (negative: top padding)
            part = x[b : b + 1, :, max(0, first) : max(0, min(h, 2 * ty1 + 2 - pt))]
            target = out[b : b + 1, :, 2 * ty0 : 2 * ty1]
            _winograd_block(np.ascontiguousarray(part), u, max(0, -first), padding[2], ty1 - ty0, tw, target)
    return out


def _winograd_block(x, u, pt, pl, th, tw, out):
    """One chunk: ``out`` (a view of the result) from ``x`` padded ``pt`` on top and ``pl`` on the left."""
    v = winograd.inputs(x, pt, pl, th, tw)
    m = np.matmul(u, v.reshape(16, x.shape[1], -1))
    winograd.outputs(m.reshape(16 * u.shape[1], -1), out, th, tw)


def _winograd_outs(x_shape, padding):
    pt, pb, pl, pr = padding
    return out_size(x_shape[2], 3, 1, pt, pb), out_size(x_shape[3], 3, 1, pl, pr)


def _winograd_forward(ctx, x, w, u, bias, padding):
    return _add_bias(_winograd_conv(x, w, u, padding, _winograd_outs(x.shape, padding)), bias, "NCHW")


def _winograd_infer(x: Spec, w: Spec, u: Spec, bias, padding) -> Spec:
    if len(x.shape) != 4 or tuple(w.shape[1:]) != (x.shape[1], 3, 3) or tuple(u.shape) != (16, *w.shape[:2]):
        raise ShapeError(
            f"conv2d_winograd: expected x [N, C, H, W], 3x3 filters [O, C, 3, 3] and their transform "
            f"[16, O, C], got x{list(x.shape)}, {list(w.shape)} and {list(u.shape)}"
        )
    return Spec((x.shape[0], w.shape[0], *_winograd_outs(x.shape, padding)), x.dtype)


def _winograd_samples(rng):
    """Sizes where whole-image Winograd pays (32 outputs, 4 tiles), where one thread runs it in
    tile-row chunks (4 outputs, odd sizes, asymmetric padding) and where the op falls back to the
    plain convolution (1 tile)."""
    w32, w4 = rng.standard_normal((32, 3, 3, 3)), rng.standard_normal((4, 3, 3, 3))
    u32, u4 = winograd.weights(w32), winograd.weights(w4)
    return [
        Sample((rng.standard_normal((2, 3, 4, 5)), w32, u32, rng.standard_normal(32)), {"padding": (1, 1, 1, 1)}),
        Sample((rng.standard_normal((2, 3, 21, 9)), w4, u4, rng.standard_normal(4)), {"padding": (1, 0, 0, 1)}),
        Sample((rng.standard_normal((1, 3, 4, 4)), w4, u4, None), {"padding": (0, 0, 0, 0)}),
    ]


conv2d_winograd_op = OpDef(
    "conv2d_winograd",
    _winograd_forward,
    None,
    _winograd_infer,
    OPAQUE,
    samples=_winograd_samples,
    items=item_rules.leading,
)


@lowering("conv2d_winograd")
def _winograd_lowering(attrs, in_types, out_types):
    """At known sizes: the output size and the plain path made once; the thread count picks at run time."""
    padding, x_shape, w_shape = attrs["padding"], in_types[0][0], in_types[1][0]
    outs = _winograd_outs(x_shape, padding)
    run = _lowered_forward(w_shape, (1, 1), padding, (1, 1), 1, outs)
    return lambda x, w, u, bias: _add_bias(_winograd_conv(x, w, u, padding, outs, run), bias, "NCHW")


# ----- conv2d_scaled: a 1x1 conv of a per-channel-scaled input ---------------------------------------


def _scaled(x, s, w, bias):
    """``conv2d(x * s, w) + bias`` for a 1x1, stride-1, unpadded ``w`` and a per-image channel scale
    ``s`` [N or 1, C, 1, 1], as ``(w * s[n]) @ x[n]``: scaling the [O, C] weight per image is O*C
    products, scaling the input C*H*W (a squeeze-excite block's multiply: 40 us of PP-OCR cls's
    [6, 200, 2, 96] activations, a whole pass over them, for 6 x 6400 weight products here)."""
    n, c = x.shape[:2]
    scaled = w.reshape(w.shape[0], c) * s.reshape(s.shape[0], 1, c)
    out = BLAS_CAP.matmul(scaled, np.ascontiguousarray(x).reshape(n, c, -1)).reshape(n, w.shape[0], *x.shape[2:])
    return _add_bias(out, bias, "NCHW")


def _scaled_forward(ctx, x, s, w, bias):
    return _scaled(x, s, w, bias)


def _scaled_infer(x: Spec, s: Spec, w: Spec, bias) -> Spec:
    scale_ok = len(s.shape) == 4 and s.shape[0] in (1, x.shape[0]) and tuple(s.shape[1:]) == (x.shape[1], 1, 1)
    if len(x.shape) != 4 or tuple(w.shape[1:]) != (x.shape[1], 1, 1) or not scale_ok:
        raise ShapeError(
            f"conv2d_scaled: expected x [N, C, H, W], a scale [N or 1, C, 1, 1] and 1x1 filters [O, C, 1, 1], "
            f"got x{list(x.shape)}, {list(s.shape)} and {list(w.shape)}"
        )
    return Spec((x.shape[0], w.shape[0], *x.shape[2:]), x.dtype)


def _scaled_samples(rng):
    x, w = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((4, 3, 1, 1))
    return [
        Sample((x, rng.standard_normal((2, 3, 1, 1)), w, rng.standard_normal(4))),
        Sample((x, rng.standard_normal((1, 3, 1, 1)), w, None)),
    ]


conv2d_scaled_op = OpDef(
    "conv2d_scaled", _scaled_forward, None, _scaled_infer, OPAQUE, samples=_scaled_samples, items=item_rules.leading
)


@lowering("conv2d_scaled")
def _scaled_lowering(attrs, in_types, out_types):
    return _scaled
