"""im2col / col2im for 2-D convolution (NCHW input), so the arithmetic is BLAS GEMMs.

Columns are ``[N, C*kh*kw, OH*OW]``: per image, one row per (channel, kernel tap) holding that
tap's input over every output position. Rows are filled by contiguous runs along the output
width (the padding's zero margins are computed once per row, not tested per element), and a
GEMM with the [O, C*kh*kw] weight writes the NCHW output directly, with no transpose after it.
"""

import numpy as np
from numba import njit, prange

from . import parallel_kernel


@njit(cache=True, inline="always")
def _valid_run(j, dw, sw, pl, w, ow):
    """Output columns [lo, hi) whose input column ``xo*sw - pl + j*dw`` lies inside [0, w)."""
    off = j * dw - pl
    lo = 0
    while lo < ow and lo * sw + off < 0:
        lo += 1
    hi = ow
    while hi > lo and (hi - 1) * sw + off >= w:
        hi -= 1
    return lo, hi, off


@parallel_kernel
def im2col(x, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    n, c, h, w = x.shape
    cols = np.empty((n, c * kh * kw, oh * ow), dtype=x.dtype)
    for t in prange(n * c):
        b = t // c
        ci = t % c
        for i in range(kh):
            for j in range(kw):
                r = (ci * kh + i) * kw + j
                lo, hi, off = _valid_run(j, dw, sw, pl, w, ow)
                for y in range(oh):
                    hi_row = y * sh - pt + i * dh
                    base = y * ow
                    if hi_row < 0 or hi_row >= h:
                        for xo in range(ow):
                            cols[b, r, base + xo] = 0
                        continue
                    for xo in range(lo):
                        cols[b, r, base + xo] = 0
                    for xo in range(lo, hi):
                        cols[b, r, base + xo] = x[b, ci, hi_row, xo * sw + off]
                    for xo in range(hi, ow):
                        cols[b, r, base + xo] = 0
    return cols


@parallel_kernel
def col2im(cols, n, c, h, w, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """The adjoint of ``im2col``: overlapping windows add up; each (image, channel) is one task."""
    out = np.zeros((n, c, h, w), dtype=cols.dtype)
    for t in prange(n * c):
        b = t // c
        ci = t % c
        for i in range(kh):
            for j in range(kw):
                r = (ci * kh + i) * kw + j
                lo, hi, off = _valid_run(j, dw, sw, pl, w, ow)
                for y in range(oh):
                    hi_row = y * sh - pt + i * dh
                    if hi_row < 0 or hi_row >= h:
                        continue
                    base = y * ow
                    for xo in range(lo, hi):
                        out[b, ci, hi_row, xo * sw + off] += cols[b, r, base + xo]
    return out
