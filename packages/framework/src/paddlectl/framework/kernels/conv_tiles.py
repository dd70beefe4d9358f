"""Convolution as register tiles (an implicit GEMM) for layers with few output channels.

The direct kernel (``direct_conv``) keeps its partial sums in memory and needs 36 broadcast weights
for four output channels, more than AVX2's 16 vector registers: 15-32 GMAC/s here. This kernel keeps
a tile of neighbouring output pixels x output channels (4 x 24, or 6 x 16 / 6 x 8) in registers over
the whole reduction (input channels x taps), as ``gemm``'s micro-kernel does for dense layers: per tap
one vector load of the packed weights per 8 channels, one broadcast per pixel. The input is read in
place through a table of the taps' offsets (no columns): each band of output rows copies the input
rows it reads into a zero-bordered buffer (the padding) of about ``BAND_BYTES``, reused for the
part's next band. The result is pixel-major ([N, OH*OW, channels]), one transpose from NCHW.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import gemm, njit, parallel_kernel
from .gemm import LANES, _tile_intrinsic

BAND_BYTES = 768 * 1024
"""About one band's padded input rows (at least four output rows' worth): 48 -> 24 channels, 3x3
stride 2 at 368x368, one thread, CPU ms: 1 row 15.9, 2 rows 13.5-15, 4 rows 12.8-13.8, 8 rows 13.7."""

PARTS = 16
"""Bands are dealt to this many tasks (each with one buffer), round robin."""

_T3 = _tile_intrinsic(3, 4, indexed=True, stride=3 * LANES)
_T2 = _tile_intrinsic(2, 6, indexed=True, stride=2 * LANES)
_T1 = _tile_intrinsic(1, 6, indexed=True, stride=LANES)
"""Tiles 3, 2 and 1 vectors wide, of 4, 6 and 6 output pixels: the accumulators, a panel row and a
broadcast fill AVX2's 16 registers."""


def vectors_for(out_channels: int) -> int:
    """Tile width in vectors: the channels in one pass where they fit 3 vectors, else 2-vector panels."""
    lanes = -(-out_channels // LANES)
    return lanes if lanes <= 3 else 2


def pack(w: np.ndarray, vectors: int) -> np.ndarray:
    """[O, C, kh, kw] weights as ``gemm.pack``'s panels ``vectors*LANES`` wide: one row per (channel,
    tap) after the (zero) bias row, columns past O zero."""
    return gemm.pack(w.reshape(w.shape[0], -1).T, width=vectors * LANES)


@njit(cache=True, inline="always")
def _fill(buf, x, b, row0, pl, wd):
    """``buf[c, r, pl:pl + wd] = x[b, c, row0 + r]`` where that row is in the image, zero rows elsewhere;
    the border columns stay as allocated (zero)."""
    c, rows, wp = buf.shape
    h = x.shape[2]
    for ci in range(c):
        for r in range(rows):
            src = row0 + r
            dst = buf[ci, r]
            if 0 <= src < h:
                line = x[b, ci, src]
                for q in range(wd):
                    dst[pl + q] = line[q]
            else:
                for q in range(wp):
                    dst[q] = 0.0


@njit(cache=True, inline="always")
def _band(tile, height, flat, offsets, packed, out, rows, y0, ow, sh, sw, wp):
    """Output rows ``y0 .. y0 + rows - 1`` of one image from its band buffer, ``height`` pixels a tile."""
    panels, k, width = packed.shape[0], packed.shape[1] - 1, packed.shape[2]
    for y in range(rows):
        for x0 in range(0, ow, height):
            pixels = min(height, ow - x0)
            for p in range(panels):
                tile(flat, y * sh * wp + x0 * sw, sw, pixels, offsets, packed, p * (k + 1) * width, k, out,
                     panels * width, (y0 + y) * ow + x0, p * width, False)  # fmt: skip


@parallel_kernel
def conv_tiles(x, packed, kh, kw, sh, sw, pt, pl, oh, ow, band_rows):
    """``out[n, y*OW + x, o] = sum_{c,i,j} w[o, c, i, j] * x_padded[n, c, y*sh + i, x*sw + j]`` for NCHW
    float32 ``x`` and ``packed`` = ``pack(w, vectors)`` (padding top ``pt`` / left ``pl``, zero
    elsewhere), columns past O unused: bands of ``band_rows`` output rows, dealt to ``PARTS`` tasks.
    One loop per tile width (a loop holding all three spilled their accumulators: 1.1x slower)."""
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
    for part in prange(parts):
        buf = np.zeros((c, rows_in, wp), dtype=np.float32)
        flat = buf.reshape(-1)
        for task in range(part, n * bands, parts):
            b, y0 = task // bands, (task % bands) * band_rows
            _fill(buf, x, b, y0 * sh - pt, pl, wd)
            rows = min(band_rows, oh - y0)
            if width == 3 * LANES:
                _band(_T3, 4, flat, offsets, packed, out[b], rows, y0, ow, sh, sw, wp)
            elif width == 2 * LANES:
                _band(_T2, 6, flat, offsets, packed, out[b], rows, y0, ow, sh, sw, wp)
            else:
                _band(_T1, 6, flat, offsets, packed, out[b], rows, y0, ow, sh, sw, wp)
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
