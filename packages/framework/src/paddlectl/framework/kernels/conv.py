"""Convolution kernels (NCHW): im2col / col2im for the GEMM path, and direct depthwise kernels.

Columns are ``[C*kh*kw, rows*OW]``: one row per (channel, kernel tap) holding that tap's input
over a range of output rows that may span several images, so small images batch into one large
GEMM with the ``[O, C*kh*kw]`` weight instead of N small ones (small GEMMs leave BLAS far below
its peak), and large ones split into column blocks that stay in cache. Rows are filled by
contiguous runs along the output width: the padding's zero margins are found once per row, and at
stride 1 a run is a straight copy.

Depthwise convolution (one input channel per group) has too little arithmetic per byte for a
GEMM, so it runs directly: each output plane accumulates its kh*kw shifted, scaled input planes.
"""

import numpy as np
from numba import njit, prange

from . import parallel_kernel


@njit(cache=True, inline="always")
def _valid_run(j, dw, sw, pl, w, ow):
    """Output columns [lo, hi) whose input column ``xo*sw - pl + j*dw`` lies inside [0, w) (rows alike)."""
    off = j * dw - pl
    lo = 0
    while lo < ow and lo * sw + off < 0:
        lo += 1
    hi = ow
    while hi > lo and (hi - 1) * sw + off >= w:
        hi -= 1
    return lo, hi, off


@njit(cache=True, inline="always")
def _copy(dst, src):
    """Element loops over 1-D views: Numba's slice assignment checks overlap and broadcasting per
    call, which costs more than a short run itself; a plain loop over a contiguous pair vectorises."""
    for q in range(dst.size):
        dst[q] = src[q]


@njit(cache=True, inline="always")
def _zero(dst):
    for q in range(dst.size):
        dst[q] = 0


@njit(cache=True, inline="always")
def _add(dst, src):
    for q in range(dst.size):
        dst[q] += src[q]


@njit(cache=True, inline="always")
def _axpy(dst, k, src):
    for q in range(dst.size):
        dst[q] += k * src[q]


@njit(cache=True, inline="always")
def _fma(dst, a, b):
    """``dst += a * b`` over 1-D views."""
    for q in range(dst.size):
        dst[q] += a[q] * b[q]


@parallel_kernel
def im2col(x, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, q0, q1):
    """Columns of output rows ``q0 <= q < q1``, where q = image * OH + y runs over the whole batch."""
    n, c, h, w = x.shape
    cols = np.empty((c * kh * kw, (q1 - q0) * ow), dtype=x.dtype)
    for r in prange(c * kh * kw):
        ci = r // (kh * kw)
        i = (r // kw) % kh
        j = r % kw
        lo, hi, off = _valid_run(j, dw, sw, pl, w, ow)
        for q in range(q0, q1):
            b = q // oh
            row = (q % oh) * sh - pt + i * dh
            base = (q - q0) * ow
            if row < 0 or row >= h:
                _zero(cols[r, base : base + ow])
                continue
            _zero(cols[r, base : base + lo])
            if sw == 1:
                _copy(cols[r, base + lo : base + hi], x[b, ci, row, lo + off : hi + off])
            else:
                _copy(cols[r, base + lo : base + hi], x[b, ci, row, lo * sw + off :: sw])
            _zero(cols[r, base + hi : base + ow])
    return cols


@parallel_kernel
def col2im(cols, out, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, q0, q1):
    """The adjoint of ``im2col``, added into ``out`` [N, C, H, W]: overlapping windows add up, and
    each (image, channel) plane is one task, so no two tasks write the same element."""
    n, c, h, w = out.shape
    b0 = q0 // oh
    planes = ((q1 - 1) // oh - b0 + 1) * c
    for t in prange(planes):
        b = b0 + t // c
        ci = t % c
        for q in range(max(q0, b * oh), min(q1, (b + 1) * oh)):
            base = (q - q0) * ow
            for i in range(kh):
                row = (q % oh) * sh - pt + i * dh
                if row < 0 or row >= h:
                    continue
                for j in range(kw):
                    r = (ci * kh + i) * kw + j
                    lo, hi, off = _valid_run(j, dw, sw, pl, w, ow)
                    if sw == 1:
                        _add(out[b, ci, row, lo + off : hi + off], cols[r, base + lo : base + hi])
                    elif hi > lo:  # an empty run's strided slice bounds would wrap around
                        _add(
                            out[b, ci, row, lo * sw + off : (hi - 1) * sw + off + 1 : sw],
                            cols[r, base + lo : base + hi],
                        )


@parallel_kernel
def depthwise(x, w, sh, sw, pt, pl, dh, dw, oh, ow):
    """``out[n, o] = sum_ij w[o, 0, i, j] * shifted x[n, o // m]`` for [O = C*m, 1, kh, kw] weights;
    each output row takes all its taps while it sits in L1."""
    n, c, h, wd = x.shape
    o_ch, _, kh, kw = w.shape
    mult = o_ch // c
    out = np.zeros((n, o_ch, oh, ow), dtype=x.dtype)
    for t in prange(n * o_ch):
        b = t // o_ch
        o = t % o_ch
        ci = o // mult
        for y in range(oh):
            for i in range(kh):
                row = y * sh - pt + i * dh
                if row < 0 or row >= h:
                    continue
                for j in range(kw):
                    lo, hi, off = _valid_run(j, dw, sw, pl, wd, ow)
                    if sw == 1:
                        _axpy(out[b, o, y, lo:hi], w[o, 0, i, j], x[b, ci, row, lo + off : hi + off])
                    else:
                        _axpy(out[b, o, y, lo:hi], w[o, 0, i, j], x[b, ci, row, lo * sw + off :: sw])
    return out


@parallel_kernel
def depthwise_input_grad(g, w, c, h, wd, sh, sw, pt, pl, dh, dw):
    """The adjoint of ``depthwise`` in x: each (image, input channel) gathers its m output planes."""
    n, o_ch, oh, ow = g.shape
    _, _, kh, kw = w.shape
    mult = o_ch // c
    dx = np.zeros((n, c, h, wd), dtype=g.dtype)
    for t in prange(n * c):
        b = t // c
        ci = t % c
        for o in range(ci * mult, (ci + 1) * mult):
            for y in range(oh):
                for i in range(kh):
                    row = y * sh - pt + i * dh
                    if row < 0 or row >= h:
                        continue
                    for j in range(kw):
                        lo, hi, off = _valid_run(j, dw, sw, pl, wd, ow)
                        if hi == lo:  # an empty run's strided slice bounds would wrap around
                            continue
                        if sw == 1:
                            _axpy(dx[b, ci, row, lo + off : hi + off], w[o, 0, i, j], g[b, o, y, lo:hi])
                        else:
                            _axpy(
                                dx[b, ci, row, lo * sw + off : (hi - 1) * sw + off + 1 : sw],
                                w[o, 0, i, j],
                                g[b, o, y, lo:hi],
                            )
    return dx


@parallel_kernel
def depthwise_weight_grad(x, g, kh, kw, sh, sw, pt, pl, dh, dw):
    """``dw[o, 0, i, j]``: one task per output channel (no races), summed over the batch through
    per-tap row accumulators so the inner loop is a vectorisable multiply-add."""
    n, c, h, wd = x.shape
    _, o_ch, oh, ow = g.shape
    mult = o_ch // c
    dwt = np.empty((o_ch, 1, kh, kw), dtype=x.dtype)
    for o in prange(o_ch):
        ci = o // mult
        acc = np.zeros((kh, kw, ow), dtype=x.dtype)
        for b in range(n):
            for y in range(oh):
                for i in range(kh):
                    row = y * sh - pt + i * dh
                    if row < 0 or row >= h:
                        continue
                    for j in range(kw):
                        lo, hi, off = _valid_run(j, dw, sw, pl, wd, ow)
                        if sw == 1:
                            _fma(acc[i, j, lo:hi], g[b, o, y, lo:hi], x[b, ci, row, lo + off : hi + off])
                        else:
                            _fma(acc[i, j, lo:hi], g[b, o, y, lo:hi], x[b, ci, row, lo * sw + off :: sw])
        for i in range(kh):
            for j in range(kw):
                dwt[o, 0, i, j] = acc[i, j].sum()
    return dwt
