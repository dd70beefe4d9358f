"""im2col / col2im for 2-D convolution (NCHW input), so the arithmetic is one BLAS GEMM.

The column matrix is ``[N*OH*OW, C*kh*kw]`` (one row per output position, channel-major
columns): OpenBLAS runs the three GEMMs of a convolution (forward, weight grad, input grad)
fastest in this orientation for the small channel counts of LeNet-sized nets, and a channel
group is a contiguous block of columns.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def im2col(x, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    n, c, h, w = x.shape
    k = c * kh * kw
    cols = np.empty((n * oh * ow, k), dtype=x.dtype)
    for t in prange(n * oh):
        b = t // oh
        y = t % oh
        for xo in range(ow):
            m = t * ow + xo
            for ci in range(c):
                for i in range(kh):
                    hi = y * sh - pt + i * dh
                    r = (ci * kh + i) * kw
                    if hi < 0 or hi >= h:
                        for j in range(kw):
                            cols[m, r + j] = 0
                        continue
                    for j in range(kw):
                        wi = xo * sw - pl + j * dw
                        cols[m, r + j] = x[b, ci, hi, wi] if 0 <= wi < w else 0
    return cols


@njit(cache=True, parallel=True)
def col2im(cols, n, c, h, w, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """The adjoint of ``im2col``: overlapping windows add up; each image is one task."""
    out = np.zeros((n, c, h, w), dtype=cols.dtype)
    for b in prange(n):
        for y in range(oh):
            for xo in range(ow):
                m = (b * oh + y) * ow + xo
                for ci in range(c):
                    for i in range(kh):
                        hi = y * sh - pt + i * dh
                        if hi < 0 or hi >= h:
                            continue
                        r = (ci * kh + i) * kw
                        for j in range(kw):
                            wi = xo * sw - pl + j * dw
                            if 0 <= wi < w:
                                out[b, ci, hi, wi] += cols[m, r + j]
    return out
