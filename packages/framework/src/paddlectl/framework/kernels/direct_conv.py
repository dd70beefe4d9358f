"""Direct 3x3 and kh x 5 convolution (NCHW, one group) for layers with few output channels.

A GEMM with few rows (PP-OCR det's 96 -> 24-channel 3x3 convs: M = 24) gains little from a second
BLAS thread, and its columns are 9x the input. Here each task takes a band of output rows of one
image and copies the input rows it reads into a zeroed buffer split into ``sh*sw`` phase planes
(rows ``r*sh + a``, columns ``x*sw + e`` of the padded input), each ``wq = OW + 2 // sw`` wide. Tap
(i, j) of output (y, x) is then element ``y*wq + x`` of its phase plane shifted by a constant, so
all nine taps of a 3x3 input channel are one pass over the band: nine loads, thirty-six
multiply-adds into four output channels, one load and store each (a 5-wide kernel: a row of five
taps per pass). The last ``wq - OW`` columns of each row are junk, cropped; bands run in parallel
with no shared writes.
"""

import numpy as np
from numba import prange, uint64

from . import njit, parallel_kernel
from .conv import valid_run

_BAND_ELEMENTS = 2048
"""Output elements per band and channel (rows * wq): four channels' accumulators stay in L1 and the
band's input rows, across all input channels, in L2."""


@njit(cache=True, inline="always")
def _copy_run(dst, src):
    """Element loops over 1-D views: Numba's slice assignment checks overlap and broadcasting per
    call, which costs more than a short run itself; a plain loop over a contiguous pair vectorises."""
    for q in range(dst.size):
        dst[q] = src[q]


@njit(cache=True, inline="always")
def _nine_taps(acc, band, w, o, c, offsets):
    """``acc[k] += taps of channel c`` for outputs ``o[k]``, k < 4. Indices are unsigned (element
    q + offset): with no negative-index wraparound to rule out the loop vectorises (1.25x over
    three row views with constant offsets). Four outputs per pass share the nine input loads
    (61-64 against 55 GMAC/s for two, in L1)."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = _taps(w, o[0], c)
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = _taps(w, o[1], c)
    c0, c1, c2, c3, c4, c5, c6, c7, c8 = _taps(w, o[2], c)
    d0, d1, d2, d3, d4, d5, d6, d7, d8 = _taps(w, o[3], c)
    u0, u1, u2, u3, u4, u5, u6, u7, u8 = offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], offsets[5], offsets[6], offsets[7], offsets[8]  # fmt: skip
    for q in range(np.uint64(acc.shape[1])):
        x0, x1, x2 = band[q + u0], band[q + u1], band[q + u2]
        x3, x4, x5 = band[q + u3], band[q + u4], band[q + u5]
        x6, x7, x8 = band[q + u6], band[q + u7], band[q + u8]
        acc[0, q] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3 + a4 * x4 + a5 * x5 + a6 * x6 + a7 * x7 + a8 * x8
        acc[1, q] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3 + b4 * x4 + b5 * x5 + b6 * x6 + b7 * x7 + b8 * x8
        acc[2, q] += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3 + c4 * x4 + c5 * x5 + c6 * x6 + c7 * x7 + c8 * x8
        acc[3, q] += d0 * x0 + d1 * x1 + d2 * x2 + d3 * x3 + d4 * x4 + d5 * x5 + d6 * x6 + d7 * x7 + d8 * x8


@njit(cache=True, inline="always")
def _taps(w, o, c):
    """The nine weights of output o, input channel c."""
    return w[o, c, 0, 0], w[o, c, 0, 1], w[o, c, 0, 2], w[o, c, 1, 0], w[o, c, 1, 1], w[o, c, 1, 2], w[o, c, 2, 0], w[o, c, 2, 1], w[o, c, 2, 2]  # fmt: skip


@njit(cache=True, inline="always")
def _five_taps(acc, band, w, o, c, i, offsets):
    """``acc[k] += taps (i, 0..4) of channel c`` for outputs ``o[k]``, k < 4 (see ``_nine_taps``)."""
    a0, a1, a2, a3, a4 = w[o[0], c, i, 0], w[o[0], c, i, 1], w[o[0], c, i, 2], w[o[0], c, i, 3], w[o[0], c, i, 4]
    b0, b1, b2, b3, b4 = w[o[1], c, i, 0], w[o[1], c, i, 1], w[o[1], c, i, 2], w[o[1], c, i, 3], w[o[1], c, i, 4]
    c0, c1, c2, c3, c4 = w[o[2], c, i, 0], w[o[2], c, i, 1], w[o[2], c, i, 2], w[o[2], c, i, 3], w[o[2], c, i, 4]
    d0, d1, d2, d3, d4 = w[o[3], c, i, 0], w[o[3], c, i, 1], w[o[3], c, i, 2], w[o[3], c, i, 3], w[o[3], c, i, 4]
    u0, u1, u2, u3, u4 = offsets[5 * i], offsets[5 * i + 1], offsets[5 * i + 2], offsets[5 * i + 3], offsets[5 * i + 4]
    for q in range(np.uint64(acc.shape[1])):
        x0, x1, x2, x3, x4 = band[q + u0], band[q + u1], band[q + u2], band[q + u3], band[q + u4]
        acc[0, q] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3 + a4 * x4
        acc[1, q] += b0 * x0 + b1 * x1 + b2 * x2 + b3 * x3 + b4 * x4
        acc[2, q] += c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3 + c4 * x4
        acc[3, q] += d0 * x0 + d1 * x1 + d2 * x2 + d3 * x3 + d4 * x4


@njit(cache=True, inline="always")
def _fill_band(band, x, b, y0, hq, sh, sw, pt, pl, wq):
    """The phase planes of image ``b``'s padded input for output rows from ``y0``: plane (a, e) row r
    holds padded row ``(y0 + r)*sh + a`` at columns ``e, e + sw, ...``; padding stays zero."""
    c, h, wd = x.shape[1], x.shape[2], x.shape[3]
    for e in range(sw):
        lo, hi, off = valid_run(e, 1, sw, pl, wd, wq)
        for a in range(sh):
            base = (a * sw + e) * hq * wq
            for r in range(hq):
                row = (y0 + r) * sh + a - pt
                if 0 <= row < h:
                    for ci in range(c):  # an element loop, unsigned offsets: no views (two atomic
                        start = base + r * wq  # reference count updates each) and it vectorises
                        for q in range(lo, hi):
                            band[ci, uint64(start + q)] = x[b, ci, row, uint64(q * sw + off)]


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _conv_band(x, w, out, b, y0, height, sh, sw, pt, pl, wq):
    """Output rows ``y0 .. y0 + height - 1`` of image ``b``, every channel. A function of its own (not
    inlined), so the serial and parallel variants of ``conv_direct`` run the same vectorised code."""
    o_ch, c, kh, kw = w.shape
    hq = height + (kh - 1) // sh
    band = np.zeros((c, sh * sw * hq * wq + (kw - 1) // sw), dtype=x.dtype)
    _fill_band(band, x, b, y0, hq, sh, sw, pt, pl, wq)
    offsets = np.empty(kh * kw, dtype=np.uint64)
    for i in range(kh):
        for j in range(kw):
            offsets[i * kw + j] = ((i % sh) * sw + j % sw) * hq * wq + (i // sh) * wq + j // sw
    acc = np.empty((4, height * wq), dtype=x.dtype)
    outs = np.empty(4, dtype=np.int64)
    for o in range(0, o_ch, 4):
        for k in range(4):  # a last group of fewer than four repeats its last output
            outs[k] = min(o + k, o_ch - 1)
        acc[:] = 0
        for ci in range(c):
            if kw == 3:
                _nine_taps(acc, band[ci], w, outs, ci, offsets)
            else:
                for i in range(kh):
                    _five_taps(acc, band[ci], w, outs, ci, i, offsets)
        for k in range(4):
            for y in range(height):  # explicit copies: a slice assignment per short row costs more
                _copy_run(out[b, outs[k], y0 + y], acc[k, y * wq :])


@parallel_kernel
def conv_direct(x, w, sh, sw, pt, pl, oh, ow):
    """``out[n, o, y, x] = sum_{c,i,j} w[o, c, i, j] * x_padded[n, c, y*sh + i, x*sw + j]`` for NCHW
    ``x`` and [O, C, 3, 3] or [O, C, kh, 5] ``w`` (padding top ``pt`` / left ``pl``; bottom and right
    follow from ``oh``/``ow``), one task per band of output rows."""
    n = x.shape[0]
    wq = ow + (w.shape[3] - 1) // sw
    rows = max(1, min(oh, _BAND_ELEMENTS // wq))
    bands = (oh + rows - 1) // rows
    out = np.empty((n, w.shape[0], oh, ow), dtype=x.dtype)
    for task in prange(n * bands):
        y0 = (task % bands) * rows
        _conv_band(x, w, out, task // bands, y0, min(rows, oh - y0), sh, sw, pt, pl, wq)
    return out
