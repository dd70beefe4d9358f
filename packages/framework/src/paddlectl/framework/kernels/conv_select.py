"""Which algorithm runs a convolution of given shapes: direct kernels, shifted GEMMs or columns.

* one input channel per output (depthwise, or a single-channel image): direct Numba kernels
  (register tiles, ``kernels.depthwise_tiles``, for float32 3x3/5x5/7x7 at stride 1 or 2);
* 1x1 without padding: the (strided) input is already the GEMM operand;
* float32 layers of strides 1 and 2 with rows at least ``PIXELS_MIN_WIDTH`` wide at inference, and
  narrower ones at strides (1, 1) and (2, 2): register tiles with the output pixels along the vector
  lanes (``kernels.pixel_tiles``); in training, layers of stride 1 and wide ones of stride 2 keep no
  columns: pixel tiles forward and ``kernels.weight_tiles`` for the weights (``trains_on_pixels``);
  input gradients as pixel tiles too, one stride-1 convolution per phase of the stride
  (``_phases_pay``);
* small stride-1 images at inference: one GEMM per kernel tap over the padded batch (no columns);
* float32 3x3 layers (stride 1 or 2) with few output channels: register tiles (``kernels.conv_tiles``);
* 3x3 and kh x 5 layers (stride 1 or 2) with few output channels at inference, tiny or (3x3, on
  more than one thread) large: a direct Numba kernel;
* otherwise im2col (``kernels.im2col``): columns of cache-sized blocks of output rows across the
  batch, one BLAS GEMM per block (per group); at stride 1 their rows are as wide as the padded
  input, so that each kernel tap of a block is one long run to copy and, in the input gradient,
  to add back.

Three computations over NCHW arrays serve every conv op (the ops only check arguments and lay
out data): ``forward`` (conv), ``input_grad`` (its adjoint in x, which is also the transposed
convolution) and ``weight_grad``.
"""

from __future__ import annotations

import functools
import math
import weakref

import numba
import numpy as np

from . import conv_tiles, depthwise_tiles, parallel_allowed, pixel_tiles, weight_tiles
from .background import with_reference
from .blas import BLAS_CAP, PARALLEL_GEMM_MACS
from .conv import (
    col2im,
    depthwise,
    depthwise_input_grad,
    depthwise_weight_grad,
    interleave_taps,
    placed_taps,
)
from .direct_conv import conv_direct
from .im2col import (
    batch_major,
    block_columns,
    block_index,
    block_ranges,
    channel_major,
    gemm,
    gemm_nt,
    grad_columns,
    row_width,
    window_view,
)


def _one_channel_per_output(w_shape) -> bool:
    """Each output channel reads one input channel (depthwise, or a single-channel input): direct kernels."""
    return w_shape[1] == 1


def _pointwise(kernel, pads) -> bool:
    """A 1x1 kernel without padding: the (strided) input itself is the columns."""
    return tuple(kernel) == (1, 1) and not any(pads)


_NARROW_MIN_WORK = 64
"""Narrow rows pay where ``out_channels * (kw-1) * dw``, the extra GEMM work per column row of wide
rows, is above this: then the junk columns cost more than the short runs they save copying (ResNet18
at batch 16: 3x3 convs with 64-256 channels 10-20% faster narrow; LeNet's 16-channel 5x5 conv, at
64, 10% faster wide)."""


def _narrow_pays(w_shape, dil) -> bool:
    return w_shape[0] * (w_shape[3] - 1) * dil[1] > _NARROW_MIN_WORK


_SHIFT_MAX_PADDED_RATIO = 1.6
_SHIFT_MAX_WIDTH = 32
"""Stride-1 convolutions with output rows up to this wide (where short column runs are costly to
copy) and a padded image at most ``_SHIFT_MAX_PADDED_RATIO`` times their output (past it the junk
positions cost more than columns do) run as shifted GEMMs (``_shifted_forward``)."""


def _shifted_forward(x, w, pads, dil, outs):
    """Stride 1, one group, no columns: the zero-padded batch is laid out channel-major as
    [C, N*hp*wp], and each kernel tap (i, j) adds the GEMM of ``w[:, :, i, j]`` with that buffer
    shifted by ``i*dh*wp + j*dw``. Outputs come out at every padded position; those past the valid
    rows and columns are junk and cropped. For small images this beats building columns (whose
    short rows cost more to copy than the arithmetic they feed)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    pt, pb, pl, pr = pads
    hp, wp = h + pt + pb, wd + pl + pr
    span = n * hp * wp
    padded = np.zeros((c, span + (kh - 1) * dil[0] * wp + (kw - 1) * dil[1]), dtype=x.dtype)
    padded[:, :span].reshape(c, n, hp, wp)[:, :, pt : pt + h, pl : pl + wd] = x.transpose(1, 0, 2, 3)
    taps = np.ascontiguousarray(w.transpose(2, 3, 0, 1))
    out = np.empty((o, span), dtype=x.dtype)
    tap_out = np.empty_like(out)
    for t, (i, j) in enumerate(np.ndindex(kh, kw)):
        shift = i * dil[0] * wp + j * dil[1]
        np.matmul(taps[i, j], padded[:, shift : shift + span], out=tap_out if t else out)
        if t:
            out += tap_out
    valid = out.reshape(o, n, hp, wp)[:, :, : outs[0], : outs[1]]
    return np.ascontiguousarray(valid.transpose(1, 0, 2, 3))


def _shifts_pay(x_shape, stride, pads, groups, outs) -> bool:
    padded = (x_shape[2] + pads[0] + pads[1]) * (x_shape[3] + pads[2] + pads[3])
    small = outs[1] <= _SHIFT_MAX_WIDTH and padded <= _SHIFT_MAX_PADDED_RATIO * outs[0] * outs[1]
    return groups == 1 and tuple(stride) == (1, 1) and small


_DIRECT_MAX_OUT = 32
_DIRECT_SERIAL_MAX_OUT = 24
_DIRECT_MIN_OUTPUTS = 32 * 32
_DIRECT_TINY_MACS = 1 << 20
"""Layers with at most ``_DIRECT_MAX_OUT`` output channels, 3x3 (stride 1 or 2) or kh x 5
(``kernels.direct_conv``), run directly, without columns: 3x3 ones from ``_DIRECT_MIN_OUTPUTS``
output pixels (on one thread only up to ``_DIRECT_SERIAL_MAX_OUT`` output channels), and any below
``_DIRECT_TINY_MACS`` multiply-adds. A GEMM with so few rows gains little from a second BLAS thread
while bands of output rows split evenly. Measured (direct vs columns + GEMM, ms, 1 and 2 threads):
PP-OCR det's 96 -> 24-channel conv at 184x184 13.4 vs 15.4 and 8.0 vs 15.8, its 3 -> 16-channel
stride-2 first conv 3.5 vs 4.2 and 1.9 vs 3.3, cls's 3 -> 8 stride-2 one 0.14 vs 0.30; with 32
outputs (64 -> 32 at 92x92) 3.0 vs 2.8 and 1.6 vs 2.6. A tiny layer costs its calls, not its
arithmetic: LeNet's 6 -> 16-channel 5x5 conv at batch 1 takes 12 us against 17 us as window view,
columns, GEMM and crop (at batch 8 both take ~75 us, at 64 direct is 40% slower)."""


def _direct_pays(n, w_shape, stride, dil, groups, outs) -> bool:
    kernel = tuple(w_shape[2:])
    shape = (kernel == (3, 3) or kernel[1] == 5) and max(stride) <= 2 and tuple(dil) == (1, 1)
    if not shape or groups != 1 or w_shape[0] > _DIRECT_MAX_OUT:
        return False
    if n * math.prod(w_shape) * outs[0] * outs[1] < _DIRECT_TINY_MACS:
        return True
    few = w_shape[0] <= _DIRECT_SERIAL_MAX_OUT or threaded()
    return kernel == (3, 3) and outs[0] * outs[1] >= _DIRECT_MIN_OUTPUTS and few


_TILES_MIN_CHANNELS = 8
_TILES_MAX_OUT = 64
_TILES_MIN_MACS = 1 << 24
"""Register tiles (``kernels.conv_tiles``) run float32 3x3 stride-1 and -2 convolutions with at most
``_TILES_MAX_OUT`` outputs from this many input channels and multiply-adds (a shorter reduction or
a small layer leaves the tiles' set-up unpaid: PP-OCRv6 det's 3 -> 24 first conv 9.7 against 6.3 ms
directly, 8 -> 16 at 64x64 0.17 against 0.12). Measured, one thread, CPU ms, against the direct
kernel (onnxruntime): 48 -> 24 at 368x368 13.4-15.2 vs 19.0-27.0 (10.2-10.8), 64 -> 24 at 184x184
5.3 vs 7.7 (3.4), 24 -> 8 at 368x368 5.3 vs 7.7 (3.8), 32 -> 32 at 92x92 0.82 vs 0.99 (0.5); stride 1:
96 -> 24 at 184x184 19.9 vs 31.9 (one thread runs it as Winograd rows: 15.4), 96 -> 16 14.2 vs 19.3,
64 -> 32 at 92x92 4.8 vs 6.9, 16 -> 16 at 368x368 11.9 vs 14.0, 24 -> 24 at 368x368 26.6 vs 26.5.
Up to 64 outputs (16-channel panels) against columns + GEMM: 48 -> 64 stride 2 at 184x184 8.6 vs
9.6 (onnxruntime 6.1), 96 -> 48 stride 2 at 96x96 3.4 vs 4.4 (2.6), PP-OCRv6 rec's 96 -> 48 stride 2
at [6, 96, 24, 160] 7.9 vs 10.7."""


class PerWeight:
    """``make(w)`` per weight: kept for a read-only one (a loaded model's weights never change) until
    it is dropped, made anew for a writeable one (eager weights change every step). ``id(w) in``
    tells whether one is held."""

    def __init__(self, make) -> None:
        self._make, self._held = make, {}

    def __contains__(self, key: int) -> bool:
        return key in self._held

    def __call__(self, w: np.ndarray):
        held = self._held.get(id(w))
        if held is not None and held[0]() is w:
            return held[1]
        value = self._make(w)
        if not w.flags.writeable:
            key = id(w)
            self._held[key] = (weakref.ref(w, lambda _, key=key: self._held.pop(key, None)), value)
        return value


_TILE_PANELS = PerWeight(lambda w: conv_tiles.pack(w, conv_tiles.vectors_for(w.shape[0])))
"""Each read-only weight packed for ``conv_tiles`` once (40-80 us a call for 48-64 outputs otherwise)."""


def _tiles_pay(x, w, stride, dil, groups, outs) -> bool:
    shape = tuple(w.shape[2:]) == (3, 3) and tuple(stride) in ((1, 1), (2, 2)) and tuple(dil) == (1, 1) and groups == 1
    few = w.shape[0] <= _TILES_MAX_OUT and w.shape[1] >= _TILES_MIN_CHANNELS
    big = x.shape[0] * math.prod(w.shape) * outs[0] * outs[1] >= _TILES_MIN_MACS
    return shape and few and big and x.dtype == np.float32 and w.dtype == np.float32


PIXELS_MIN_WIDTH = pixel_tiles.NARROW_WIDTH
"""Pixel tiles (``kernels.pixel_tiles``) run layers of strides 1 and 2 whose output rows are at least
this wide (a tile spans 16-48 pixels with AVX-512: narrower rows leave lanes idle). Measured (ms,
one / two threads, Zen 5) against what ran before. Stride 2: PP-OCRv4 det's 3 -> 16 stem at 320x640
0.69 / 0.48 vs 1.11 / 0.59 (direct), 48 -> 24 at 368x368 9.0 / 5.3 vs 12.7 / 8.4 (register tiles),
96 -> 48 at 96x96 1.85 / 1.06 vs 1.83 / 1.24, a 7x7 3 -> 64 stem at 224x224 2.0 / 1.1 vs 3.2 / 2.7,
PP-OCRv4 rec's 64 -> 128 at (2, 1) batch 8 16.4 / 10.9 vs 22.1 / 17.4 (columns + GEMM). Stride 1:
PP-OCRv4 det's 96 -> 24 3x3 at 80x160 4.1 / 2.1 vs register tiles 5.9 / 3.4, 16 -> 16 at 368x368
7.4 / 3.7 vs 11.1 / 8.4, ResNet's 64 -> 64 at 56x56 2.0 / 1.1 vs columns + GEMM 2.0 / 2.0 (Winograd
1.7 / 1.5), 128 -> 128 at 28x28 batch 8 14.6 / 8.7 vs 20.3 / 13.3 (Winograd 11.1 / 9.8), a 7x7
3 -> 64 stem at 224x224 6.8 / 3.6 vs 12.7 / 10.0; at 14x14 256 -> 256 (batch 8) 28.2 / 14.5 against
Winograd's 11.7 / 8.6."""


NARROW_MIN_PIXELS = 36
"""Narrower rows at strides (1, 1) and (2, 2) also run as pixel tiles, from this many output pixels
an image: each band joined into one row (``pixel_tiles.conv2d``). Ms against what ran before (columns
+ GEMM, shifted GEMMs or the direct kernel; at stride 2 also row-by-row tiles). Stride 2, two
threads: ResNet's 512 -> 512 from 14x14 1.13 vs 1.68 (2.36), 256 -> 256 from 28x28 1.38 vs 1.53
(1.44), batch 8 8.8 vs 14.4 (9.5), 64 -> 64 from 28x28 0.16 vs 0.26; a 32 -> 16 layer to 5x5 0.024
vs 0.022 stays a GEMM. Stride 1, one / two threads: LeNet's 6 -> 16 5x5 at 14x14 batch 64 0.49 /
0.32 vs 1.13 / 1.11, batch 8 0.068 vs 0.13; 64 -> 64 5x5 at 7x7 0.145 / 0.084 vs 0.216; 128 -> 128 at
6x20 0.30 / 0.21 vs 0.56; 3 -> 8 at 16x16 0.015 vs 0.033; 8 -> 8 at 4x4 stays (0.007 vs 0.010), and
LeNet's layer at batch 1 (10x10 outputs) runs 0.022 against the direct kernel's 0.020."""


def _pixel_layer(dtypes, kernel, stride, dil, groups) -> bool:
    """What pixel tiles compute: float32, one group, no dilation, strides 1 or 2, not 1x1."""
    strides = stride[0] in (1, 2) and stride[1] in (1, 2)
    plain = strides and tuple(dil) == (1, 1) and groups == 1 and tuple(kernel) != (1, 1)
    return plain and all(dtype == np.float32 for dtype in dtypes)


def pixels_pay(x, w, stride, dil, groups, outs) -> bool:
    """Whether ``forward`` runs this convolution as pixel tiles (at inference): rows at least
    ``PIXELS_MIN_WIDTH`` wide, or narrower at strides (1, 1) and (2, 2) (``NARROW_MIN_PIXELS``)."""
    narrow = tuple(stride) in ((1, 1), (2, 2)) and outs[0] * outs[1] >= NARROW_MIN_PIXELS
    wide = outs[1] >= PIXELS_MIN_WIDTH or narrow
    return wide and _pixel_layer((x.dtype, w.dtype), w.shape[2:], stride, dil, groups)


def trains_on_pixels(x, w, stride, dil, groups, outs) -> bool:
    """Whether ``forward`` runs a layer that trains (``keep_columns``) as pixel tiles, keeping no
    columns: its weight gradient is then ``weight_tiles`` (its input gradient is pixel tiles again at
    any stride: ``_phases_pay``). Layers of stride 1, and of stride 2 whose rows are at least
    ``PIXELS_MIN_WIDTH`` wide. Two threads, ms, forward + input gradient + weight gradient, columns
    (+ GEMM, + col2im) against tiles: LeNet's 6 -> 16 5x5 at 14x14, batch 64, 2.91 -> 1.45; 32 -> 64
    at 32x32, batch 32, 51.9 -> 23.1; 64 -> 128 at 16x16 31.6 -> 20.4; 128 -> 128 at 8x8 15.8 -> 9.6;
    a 3 -> 16 stem at stride 2 from 48x160, batch 8, 1.84 -> 1.33; 64 -> 128 at stride (2, 1) from
    12x40 6.8 -> 6.4. Narrower stride-2 rows keep their columns (64 -> 128 from 32x32, batch 32:
    forward 9.6 as columns + GEMM against 11.4 as tiles)."""
    wide = tuple(stride) == (1, 1) or outs[1] >= PIXELS_MIN_WIDTH
    return wide and _pixel_layer((x.dtype, w.dtype), w.shape[2:], stride, dil, groups)


_PIXEL_PANELS = {rows: PerWeight(functools.partial(pixel_tiles.pack, rows=rows)) for rows, _ in pixel_tiles.SHAPES}
"""Each read-only weight packed for ``pixel_tiles`` once per tile height it runs with."""


def pixel_conv(x, w, stride, pads, outs):
    """The convolution as pixel tiles (float32, one group, no dilation, strides 1 or 2)."""
    return pixel_tiles.conv2d(x, lambda rows: _PIXEL_PANELS[rows](w), w.shape[0], w.shape[2:], stride, pads, outs)


def threaded() -> bool:
    """Whether parallel kernels run on more than one thread here and now."""
    return numba.get_num_threads() > 1 and parallel_allowed()


def product_threads(macs: int) -> int:
    """Threads for a product-bound kernel of ``macs`` multiply-adds: Numba's count from
    ``blas.PARALLEL_GEMM_MACS`` where parallel kernels may run now, else one."""
    return numba.get_num_threads() if macs >= PARALLEL_GEMM_MACS and threaded() else 1


def _tap_slices(i, j, stride, dil, outs):
    """Where kernel tap (i, j) reads the padded input for every output: two strided slices."""
    (sh, sw), (dh, dw), (oh, ow) = stride, dil, outs
    return slice(i * dh, i * dh + (oh - 1) * sh + 1, sh), slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)


def _by_group(w, i, j, groups):
    """Tap (i, j) of an [O, C/G, kh, kw] weight as [G, O/G, C/G] matrices."""
    return w[:, :, i, j].reshape(groups, w.shape[0] // groups, w.shape[1])


def reference_forward(x, w, stride, pads, dil, groups, outs, keep_columns=False):
    """``forward`` in NumPy, one batched product per kernel tap (``kernels.background``'s reference
    while the kernels compile): the same convolution, summed in another order."""
    n, c = x.shape[:2]
    padded = np.pad(x, ((0, 0), (0, 0), pads[:2], pads[2:]))
    out = np.zeros((n, groups, w.shape[0] // groups, *outs), dtype=np.result_type(x, w))
    if w.shape[1] == 1:  # one input channel per group (depthwise): scaled planes, a cache-sized block at a time
        block = max(1, _REFERENCE_BLOCK // (out[0, 0].size or 1))
        for b, g0 in np.ndindex(n, -(-groups // block)):
            g = slice(g0 * block, (g0 + 1) * block)
            for i, j in np.ndindex(*w.shape[2:]):
                rows, cols = _tap_slices(i, j, stride, dil, outs)
                out[b, g] += _by_group(w, i, j, groups)[g, :, :, None] * padded[b, g, None, rows, cols]
        return out.reshape(n, w.shape[0], *outs), x
    for i, j in np.ndindex(*w.shape[2:]):
        rows, cols = _tap_slices(i, j, stride, dil, outs)
        tap = padded[:, :, rows, cols].reshape(n, groups, c // groups, -1)
        out += np.matmul(_by_group(w, i, j, groups), tap).reshape(out.shape)
    return out.reshape(n, w.shape[0], *outs), x


_REFERENCE_BLOCK = 1 << 17
"""Outputs per block of the depthwise reference (512 KB of float32): its taps' passes stay in L2."""


def reference_input_grad(g, w, x_shape, stride, pads, dil, groups):
    """``input_grad`` in NumPy: each tap's product scattered back into the padded input."""
    n, c, h, wd = x_shape
    outs = g.shape[2:]
    kh, kw = w.shape[2:]
    size = [max(s + p0 + p1, (o - 1) * st + (k - 1) * d + 1) for s, p0, p1, o, st, k, d in
            zip((h, wd), pads[::2], pads[1::2], outs, stride, (kh, kw), dil, strict=True)]  # fmt: skip
    padded = np.zeros((n, c, *size), dtype=g.dtype)
    grads = g.reshape(n, groups, w.shape[0] // groups, -1)
    for i, j in np.ndindex(kh, kw):
        rows, cols = _tap_slices(i, j, stride, dil, outs)
        back = np.matmul(_by_group(w, i, j, groups).transpose(0, 2, 1), grads)
        padded[:, :, rows, cols] += back.reshape(n, c, *outs)
    return np.ascontiguousarray(padded[:, :, pads[0] : pads[0] + h, pads[2] : pads[2] + wd])


@with_reference(reference_forward)
def forward(x, w, stride, pads, dil, groups, outs, keep_columns=False):
    """Convolution of NCHW ``x``: the NCHW output, and what the weight gradient needs (the columns
    when they were built as one block, else x); ``keep_columns`` asks for one block where it fits."""
    geometry = (*stride, pads[0], pads[2], *dil)
    n, o = x.shape[0], w.shape[0]
    if _one_channel_per_output(w.shape):
        x, w = np.ascontiguousarray(x), np.ascontiguousarray(w)
        if depthwise_tiles.supported(x, w, stride, dil):
            return depthwise_tiles.depthwise(x, w, *stride, pads[0], pads[2], *outs), x
        return depthwise(x, w, *geometry, *outs), x
    w2, pointwise = w.reshape(o, -1), _pointwise(w.shape[2:], pads)
    tiles = trains_on_pixels if keep_columns else pixels_pay
    if tiles(x, w, stride, dil, groups, outs):
        return pixel_conv(x, w, stride, pads, outs), x
    if not keep_columns and not pointwise and _shifts_pay(x.shape, stride, pads, groups, outs):
        return _shifted_forward(x, w, pads, dil, outs), x
    if not keep_columns and _tiles_pay(x, w, stride, dil, groups, outs):
        return conv_tiles.conv2d(x, _TILE_PANELS(w), o, w.shape[2:], stride, pads, outs), x
    if not keep_columns and _direct_pays(n, w.shape, stride, dil, groups, outs):
        return conv_direct(np.ascontiguousarray(x), np.ascontiguousarray(w), *stride, pads[0], pads[2], *outs), x
    if pointwise:
        strided = x[:, :, :: stride[0], :: stride[1]]
        if tuple(outs) == (1, 1) and groups == 1:  # one pixel per image (squeeze-excite): one GEMM
            return BLAS_CAP.matmul(strided.reshape(n, -1), w2.T).reshape(n, o, 1, 1), x
        if n > 1 and groups == 1 and not keep_columns:  # one GEMM per image: no transposes
            return BLAS_CAP.matmul(w2, strided.reshape(n, x.shape[1], -1)).reshape(n, o, *outs), x
        cols = channel_major(strided)
        return batch_major(gemm(w2, cols, groups), n).reshape(n, o, *outs), cols
    oh, ow = outs
    narrow = not keep_columns and _narrow_pays(w.shape, dil)
    windows = window_view(x, w.shape[2:], stride, pads, dil, outs, narrow)
    cw = windows.shape[5]
    out = np.empty((n, o, oh, ow), dtype=x.dtype)
    for q0, q1 in block_ranges(w2.shape[1] * groups, n, oh, cw, x.itemsize, keep_columns):
        cols = block_columns(windows, q0, q1)
        images, rows = block_index(q0, q1, oh)
        block = out[images, :, rows]
        res = gemm(w2, cols, groups).reshape(o, block.shape[0], block.shape[2], cw)
        block[...] = res[..., :ow].transpose(1, 0, 2, 3)
    if cols.shape[1] != n * oh * cw:
        cols = x
    return out, cols


def _taps_apart(kernel, stride, pads, dil, outs, sizes) -> bool:
    """Whether each input pixel is read by exactly one output and tap (the kernel is the stride, no
    padding or dilation, the input tiles exactly): the adjoint is then one GEMM per image and a
    placement, with no overlapping windows to add (PP-OCR det's 2x2 stride-2 transposed conv, 24 ->
    24 channels onto 368x368, with its bias: 4.8 -> 2.8 ms on one thread, 4.1 -> 2.3 on two)."""
    whole = all(size == out * k for size, out, k in zip(sizes, outs, kernel, strict=True))
    return tuple(kernel) == tuple(stride) and not any(pads) and tuple(dil) == (1, 1) and whole


_PLACED_MAX_TAPS = 16
"""Adjoints whose taps never overlap with at most this many taps per input pixel (``c*kh*kw``:
PP-OCR det's 24 -> 1 2x2 transposed conv has 4) sum each tap directly (``conv.placed_taps``): a GEMM
with so few rows runs well below memory speed (det's: 0.42 ms against 0.20 standalone, 0.52 against
0.35 in the model, two threads)."""


def _phase(a: int, s: int, k: int, p: int, size: int) -> tuple:
    """Along one axis, the padded input's positions ``u = s*m + a`` inside the image (``p <= u < p +
    size``): the taps that reach them (a, a + s, ...), their first ``m`` and how many there are."""
    m0, m1 = -(-(p - a) // s), -(-(p + size - a) // s)
    return len(range(a, k, s)), m0, m1 - m0


PHASES_MIN_MACS = 1 << 22
"""Input gradients of stride-2 layers run as pixel tiles (``_input_grad_by_phases``) from this many
multiply-adds (stride-1 ones always): each phase is a call of its own (~25 us), and the small ones
ran faster as columns + col2im. Two threads, ms, col2im against phases: 64 -> 128 from 32x32 batch
32 18.6 vs 15.7, from 28x28 128 -> 256 batch 8 16.1 vs 11.0, 64 -> 128 at stride (2, 1) from 12x40
batch 8 4.5 vs 3.1; 16 -> 40 from 14x14 0.04 vs 0.14."""


def _phases_pay(g, w, stride, dil, groups) -> bool:
    """Whether the input gradient runs as pixel tiles: at stride 1, and at stride 2 from
    ``PHASES_MIN_MACS`` multiply-adds (``g.size * w[0].size``)."""
    big = tuple(stride) == (1, 1) or g.size * w[0].size >= PHASES_MIN_MACS
    return big and _pixel_layer((g.dtype, w.dtype), w.shape[2:], stride, dil, groups)


def _input_grad_by_phases(g, w, x_shape, stride, pads):
    """The input gradient as stride-1 convolutions on pixel tiles, one per phase (a, b) of the
    stride: the padded input's positions (s*m + a, s*n + b) are reached by the taps (a + s*t, b +
    s*r) alone, so they are the convolution of the output gradient with that sub-kernel, flipped and
    its channel axes swapped, padded by its size less one less (m0, n0) (cropped where that is
    negative); phases no tap reaches (a kernel shorter than its stride) get zeros."""
    n, c, h, wd = x_shape
    (sh, sw), (kh, kw) = stride, w.shape[2:]
    dx = np.empty(x_shape, dtype=np.float32)
    for a in range(sh):
        rows_taps, m0, rows = _phase(a, sh, kh, pads[0], h)
        for b in range(sw):
            cols_taps, n0, cols = _phase(b, sw, kw, pads[2], wd)
            target = dx[:, :, sh * m0 + a - pads[0] :: sh, sw * n0 + b - pads[2] :: sw]
            if not rows or not cols:  # a phase of a one-pixel side: no positions
                continue
            if rows_taps == 0 or cols_taps == 0:
                target[...] = 0
                continue
            flipped = w[:, :, a::sh, b::sw][:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
            top, left = rows_taps - 1 - m0, cols_taps - 1 - n0
            src = g[:, :, max(0, -top) :, max(0, -left) :]
            part = pixel_conv(src, flipped, (1, 1), (max(0, top), 0, max(0, left), 0), (rows, cols))
            if (sh, sw) == (1, 1):  # the one phase is the whole gradient: no copy
                return part
            target[...] = part
    return dx


@with_reference(reference_input_grad)
def input_grad(g, w, x_shape, stride, pads, dil, groups):
    """The adjoint of ``forward`` in x, from the NCHW output gradient."""
    n, c, h, wd = x_shape
    geometry = (*stride, pads[0], pads[2], *dil)
    if _one_channel_per_output(w.shape) and c > 1:  # one plane, many outputs (a 24->1 transposed
        # conv, PP-OCR det's last layer): the GEMM path, 2.6x faster than one depthwise task
        return depthwise_input_grad(np.ascontiguousarray(g), np.ascontiguousarray(w), c, h, wd, *geometry)
    o = w.shape[0]
    oh, ow = g.shape[2:]
    if groups == 1 and _taps_apart(w.shape[2:], stride, pads, dil, (oh, ow), (h, wd)):
        if w[0].size <= _PLACED_MAX_TAPS and g.dtype == w.dtype == np.float32:
            return placed_taps(np.ascontiguousarray(g), np.ascontiguousarray(w.reshape(o, -1)), c, *w.shape[2:])
        cols = np.matmul(w.reshape(o, -1).T, g.reshape(n, o, -1))
        return interleave_taps(cols.reshape(n, c, *w.shape[2:], oh, ow))
    if _phases_pay(g, w, stride, dil, groups):
        return _input_grad_by_phases(g, w, x_shape, stride, pads)
    w_t = w.reshape(groups, o // groups, -1).transpose(0, 2, 1).reshape(-1, o // groups)
    cw = row_width(x_shape, stride, pads, (oh, ow))
    g2 = grad_columns(g, cw)
    if _pointwise(w.shape[2:], pads):
        dx = batch_major(gemm(w_t, g2, groups), n).reshape(n, c, oh, ow)
        if (oh, ow) == (h, wd):
            return dx
        full = np.zeros(x_shape, dtype=g.dtype)
        full[:, :, :: stride[0], :: stride[1]] = dx
        return full
    dx = np.zeros(x_shape, dtype=g.dtype)
    for q0, q1 in block_ranges(w_t.shape[0], n, oh, cw, g.itemsize):
        cols = gemm(w_t, g2[:, q0 * cw : q1 * cw], groups)
        col2im(cols, dx, *w.shape[2:], *geometry, oh, ow, q0, q1)
    return dx


def weight_grad(saved, g, w_shape, stride, pads, dil, groups):
    """``saved`` is the forward's columns (2-D) or its NCHW input (4-D), whose columns are rebuilt."""
    geometry = (*stride, pads[0], pads[2], *dil)
    if _one_channel_per_output(w_shape):
        return depthwise_weight_grad(np.ascontiguousarray(saved), np.ascontiguousarray(g), *w_shape[2:], *geometry)
    if saved.ndim == 4 and _pixel_layer((saved.dtype, g.dtype), w_shape[2:], stride, dil, groups):
        return weight_tiles.weight_grad(saved, g, w_shape[2:], stride, pads)
    if saved.ndim == 2:  # the forward's columns, all N*OH rows: their width tells wide from narrow
        cw = saved.shape[1] // (g.shape[0] * g.shape[2])
        return gemm_nt(grad_columns(g, cw), saved, groups).reshape(w_shape)
    oh, ow = g.shape[2:]
    windows = window_view(saved, w_shape[2:], stride, pads, dil, (oh, ow))
    cw = windows.shape[5]
    g2 = grad_columns(g, cw)
    dw = np.zeros((w_shape[0], int(np.prod(w_shape[1:]))), dtype=g.dtype)
    for q0, q1 in block_ranges(dw.shape[1] * groups, saved.shape[0], oh, cw, g.itemsize):
        dw += gemm_nt(g2[:, q0 * cw : q1 * cw], block_columns(windows, q0, q1), groups)
    return dw.reshape(w_shape)
