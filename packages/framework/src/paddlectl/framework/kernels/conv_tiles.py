"""Convolution as register tiles (an implicit GEMM) for layers with few output channels.

The direct kernel (``direct_conv``) keeps its partial sums in memory and needs 36 broadcast weights
for four output channels, more than AVX2's 16 vector registers: 15-32 GMAC/s here. This kernel keeps
a tile of neighbouring output pixels x output channels (``HEIGHTS``: with AVX2 4 x 24, 6 x 16 or
6 x 8; with AVX-512 8 x 48, 12 x 32 or 24 x 16) in registers over the whole reduction (input
channels x taps), as ``gemm``'s micro-kernel does for dense layers: per tap one vector load of the
packed weights per vector of channels, one broadcast per pixel. The input is read in
place through a table of the taps' offsets (no columns): each band of output rows copies the input
rows it reads into a zero-bordered buffer (the padding) of about ``BAND_BYTES``, reused for the
part's next band. The result is pixel-major ([N, OH*OW, channels]), one transpose from NCHW.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import gemm, njit, parallel_kernel
from .gemm import LANES, _tile_intrinsic, copy_run

BAND_BYTES = 768 * 1024
"""About one band's padded input rows (at least four output rows' worth): 48 -> 24 channels, 3x3
stride 2 at 368x368, one thread, CPU ms: 1 row 15.9, 2 rows 13.5-15, 4 rows 12.8-13.8, 8 rows 13.7."""

PARTS = 16
"""Bands are dealt to this many tasks (each with one buffer), round robin."""

HEIGHTS = (0, 24, 12, 8) if LANES == 16 else (0, 6, 6, 4)
"""Output pixels of a tile 1, 2 and 3 vectors wide (``HEIGHTS[vectors]``): the accumulators, a panel
row and a broadcast fill the register file (AVX-512's 32 registers, else AVX2's 16). Zen 5, CPU ms
of one / two threads, against the previous tiles (AVX2's heights, a pointer per pixel): PP-OCRv4
det's 96 -> 24 at 80x160 6.1 / 3.5 vs 7.1 / 4.0, 48 -> 64 stride 2 at 184x184 5.9 / 4.1 vs 6.6 /
4.5, 64 -> 32 at 92x92 2.9 / 2.0 vs 3.2 / 2.3."""

_T3_1, _T2_1, _T1_1, _T3_2, _T2_2, _T1_2 = (
    _tile_intrinsic(v, HEIGHTS[v], indexed=True, stride=v * LANES, step=s) for s in (1, 2) for v in (3, 2, 1)
)
"""``_T{vectors}_{stride}`` (module globals: what a cached Numba function may call); the stride fixed,
so that a tile's pixels are one base address and constant offsets."""


def vectors_for(out_channels: int) -> int:
    """Tile width in vectors: the channels in one pass where they fit 3 vectors, else 2-vector panels."""
    lanes = -(-out_channels // LANES)
    return lanes if lanes <= 3 else 2


def pack(w: np.ndarray, vectors: int) -> np.ndarray:
    """[O, C, kh, kw] weights as ``gemm.pack``'s panels ``vectors*LANES`` wide: one row per (channel,
    tap) after the (zero) bias row, columns past O zero."""
    return gemm.pack(w.reshape(w.shape[0], -1).T, width=vectors * LANES)


@njit(cache=True)
def _fill(buf, x, b, row0, pl, wd):
    """``buf[c, r, pl:pl + wd] = x[b, c, row0 + r]`` where that row is in the image, zero rows elsewhere;
    the border columns stay as allocated (zero). ``x`` is C-contiguous, ``buf``'s rows are (it may be a
    view of planes of a larger buffer): both are addressed by offsets, since a view of each row would
    count references on every row."""
    c, rows, wp = buf.shape
    channels, h, width = x.shape[1:]
    plane, line = buf.strides[0] // 4, buf.strides[1] // 4
    for ci in range(c):
        for r in range(rows):
            src = row0 + r
            if 0 <= src < h:
                copy_run(buf, ci * plane + r * line + pl, x, ((b * channels + ci) * h + src) * width, wd)
            else:
                for q in range(wp):
                    buf[ci, r, q] = 0.0


@njit(cache=True, inline="always")
def _tile(vectors, sw, flat, start, pixels, offsets, packed, panel, k, out, ldc, crow0, col0):
    """The tile intrinsic ``vectors`` wide for stride ``sw``."""
    if vectors == 3 and sw == 1:
        _T3_1(flat, start, 1, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)
    elif vectors == 2 and sw == 1:
        _T2_1(flat, start, 1, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)
    elif vectors == 1 and sw == 1:
        _T1_1(flat, start, 1, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)
    elif vectors == 3:
        _T3_2(flat, start, 2, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)
    elif vectors == 2:
        _T2_2(flat, start, 2, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)
    else:
        _T1_2(flat, start, 2, pixels, offsets, packed, panel, k, out, ldc, crow0, col0, False)


@njit(cache=True, inline="always")
def _band(vectors, height, flat, offsets, packed, out, rows, y0, ow, sh, sw, wp):
    """Output rows ``y0 .. y0 + rows - 1`` of one image from its band buffer, ``height`` pixels a tile."""
    panels, k, width = packed.shape[0], packed.shape[1] - 1, packed.shape[2]
    for y in range(rows):
        for x0 in range(0, ow, height):
            pixels = min(height, ow - x0)
            for p in range(panels):
                _tile(vectors, sw, flat, y * sh * wp + x0 * sw, pixels, offsets, packed, p * (k + 1) * width, k,
                      out, panels * width, (y0 + y) * ow + x0, p * width)  # fmt: skip


@parallel_kernel
def conv_tiles(x, packed, kh, kw, sh, sw, pt, pl, oh, ow, band_rows):
    """``out[n, y*OW + x, o] = sum_{c,i,j} w[o, c, i, j] * x_padded[n, c, y*sh + i, x*sw + j]`` for NCHW
    float32 ``x`` and ``packed`` = ``pack(w, vectors)`` (padding top ``pt`` / left ``pl``, zero
    elsewhere), columns past O unused: bands of ``band_rows`` output rows, dealt to ``PARTS`` tasks.
    Tiles read whole: their pixels past a row's end read the next row (or the buffer's slack) and
    are not stored."""
    n, c, _, wd = x.shape
    panels, k, width = packed.shape[0], packed.shape[1] - 1, packed.shape[2]
    wp = max((ow - 1) * sw + kw, pl + wd)
    rows_in = (band_rows - 1) * sh + kh
    offsets = np.empty(k, dtype=np.int64)
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                offsets[(ci * kh + i) * kw + j] = (ci * rows_in + i) * wp + j
    bands = (oh + band_rows - 1) // band_rows
    out = np.empty((n, oh * ow, panels * width), dtype=np.float32)
    parts = min(PARTS, n * bands)
    vectors = width // LANES
    height = HEIGHTS[vectors]
    size = c * rows_in * wp
    for part in prange(parts):
        flat = np.zeros(size + height * sw, dtype=np.float32)  # a last tile's rows past the band read here
        buf = flat[:size].reshape(c, rows_in, wp)
        for task in range(part, n * bands, parts):
            b, y0 = task // bands, (task % bands) * band_rows
            _fill(buf, x, b, y0 * sh - pt, pl, wd)
            rows = min(band_rows, oh - y0)
            _band(vectors, height, flat, offsets, packed, out[b], rows, y0, ow, sh, sw, wp)
    return out


def band_rows(channels: int, width: int, kh: int, sh: int) -> int:
    """Output rows per band: as many as keep the band's padded input near ``BAND_BYTES``."""
    rows_in = BAND_BYTES // max(1, 4 * channels * width)
    return max(4, (rows_in - kh) // sh + 1)


def conv2d(x: np.ndarray, packed: np.ndarray, out_channels: int, kernel, stride, pads, outs) -> np.ndarray:
    """NCHW float32 convolution (one group, no dilation) by ``conv_tiles``: the NCHW result."""
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, outs
    wp = max((ow - 1) * sw + kw, pads[2] + x.shape[3])
    rows = band_rows(x.shape[1], wp, kh, sh)
    pixels = conv_tiles(np.ascontiguousarray(x), packed, kh, kw, sh, sw, pads[0], pads[2], oh, ow, rows)
    return np.ascontiguousarray(pixels[:, :, :out_channels].transpose(0, 2, 1)).reshape(
        x.shape[0], out_channels, oh, ow
    )
