"""Convolution kernels (NCHW): col2im for the GEMM path's input gradient, and direct depthwise kernels.

Columns are ``[C*kh*kw, rows*CW]`` (see ``ops.conv``: one row per (channel, kernel tap) over a
range of output rows that may span several images, CW the padded input width at stride 1, else
the output width); building them is a NumPy strided copy, and their adjoint, adding overlapping
windows back, is ``col2im``.

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
def _add(dst, src):
    for q in range(dst.size):
        dst[q] += src[q]


@njit(cache=True, inline="always")
def _axpy(dst, k, src):
    for q in range(dst.size):
        dst[q] += k * src[q]


@parallel_kernel
def col2im(cols, out, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, q0, q1):
    """The adjoint of the column copy (``ops.conv._block_columns``) for output rows ``q0 <= q < q1``
    (q = image * OH + y), added into ``out`` [N, C, H, W]. Column rows are ``cw`` wide: the padded
    input width at stride 1 along W ("wide" rows, whose junk tail columns are zero), else OW.

    Each (image, channel) plane is one task (no two tasks write the same element); it adds its taps
    into a zeroed buffer of the padded rows the block touches, so no tap is clipped at a border, and
    then adds the buffer's image part into ``out``. With wide rows the buffer's row stride is ``cw``,
    so at stride 1 a tap's rows are ONE contiguous run (a 5x5 kernel over 10x10 outputs adds 25 runs
    of 140, not 250 of 10), which vectorises."""
    n, c, h, w = out.shape
    width = cols.shape[1]
    cw = width // (q1 - q0)
    bw = cw if sw == 1 else (ow - 1) * sw + (kw - 1) * dw + 1
    b0 = q0 // oh
    flat_cols = cols.reshape(-1)
    for t in prange(((q1 - 1) // oh - b0 + 1) * c):
        b = b0 + t // c
        ci = t % c
        y0, y1 = max(q0, b * oh) - b * oh, min(q1, (b + 1) * oh) - b * oh
        bh = (y1 - 1 - y0) * sh + (kh - 1) * dh + 1
        buf = np.zeros(bh * bw + (kw - 1) * dw, dtype=out.dtype)
        for i in range(kh):
            for j in range(kw):
                src = ((ci * kh + i) * kw + j) * width + (b * oh + y0 - q0) * cw
                dst = i * dh * bw + j * dw
                if sh == 1 and sw == 1:
                    span = (y1 - y0) * cw
                    _add(buf[dst : dst + span], flat_cols[src : src + span])
                    continue
                for y in range(y1 - y0):
                    d, s = dst + y * sh * bw, src + y * cw
                    _add(buf[d : d + (ow - 1) * sw + 1 : sw], flat_cols[s : s + ow])
        for k in range(bh):
            row = y0 * sh + k - pt
            if 0 <= row < h:
                _add(out[b, ci, row, : max(0, min(w, bw - pl))], buf[k * bw + pl : k * bw + min(pl + w, bw)])


@njit(cache=True, fastmath=True)
def _dot(a, b):
    """Dot product of two 1-D views in their own dtype (``a[:0].sum()``: a zero of it), as BLAS
    does; fastmath lets the reduction vectorise into several partial sums, so float32 keeps its
    accuracy while running twice as many lanes as float64 (LeNet's 1-channel conv weight
    gradient: 0.27 -> 0.17 ms). Callers add the dots up in float64."""
    acc = a[:0].sum()
    for q in range(a.size):
        acc += a[q] * b[q]
    return acc


# Stride-1 depthwise planes are handled "flat": the input plane is zero-padded into rows of the
# padded width wp = OW + (kw-1)*dw, and the output is computed over rows of that same width (the
# last (kw-1)*dw columns of each row are junk, cropped at the end). Every tap (i, j) is then ONE
# contiguous multiply-add over the whole plane, at offset i*dh*wp + j*dw, instead of a short run
# per output row: a 5x5 kernel on 80-wide rows does 25 long vector loops, not 25 * OH short ones.


@njit(cache=True, inline="always")
def _vector_width(wp, rows):
    """``wp`` widened (by at most a sixteenth) so that ``rows * wp`` is a multiple of 16: a small
    plane's tap loops then end on a full AVX-512 vector, not a scalar tail (PP-OCR cls's 2-row
    planes: 200 -> 208 elements; 0.56 -> 0.45 ms for its [6, 200, 2, 96] 5x5, within this VM's noise)."""
    for extra in range(wp // 16 + 1):
        if (rows * (wp + extra)) % 16 == 0:
            return wp + extra
    return wp


@njit(cache=True, inline="always")
def _fill_padded(buf, src, pt, pl, wp):
    """``src`` [h, w] into a zeroed flat buffer of rows of ``wp`` at (pt, pl); the border stays zero,
    so one buffer per task serves every image it handles."""
    for y in range(min(src.shape[0], buf.size // wp - pt)):
        _copy(buf[(pt + y) * wp + pl : (pt + y) * wp + min(pl + src.shape[1], wp)], src[y])


@njit(cache=True, inline="always")
def _fill_rows(buf, src, wp):
    """[oh, ow] rows into a zeroed flat buffer at a stride of ``wp`` (the junk columns stay zero)."""
    for y in range(src.shape[0]):
        _copy(buf[y * wp : y * wp + src.shape[1]], src[y])


_PARTS = 64
"""Depthwise tasks are split into at most this many parts (buffers per part; several per thread)."""


@parallel_kernel
def depthwise(x, w, sh, sw, pt, pl, dh, dw, oh, ow):
    """``out[n, o] = sum_ij w[o, 0, i, j] * shifted x[n, o // m]`` for [O = C*m, 1, kh, kw] weights;
    one task per (image, input channel), its padded plane shared by the m outputs it feeds. Tasks
    run in ``_PARTS`` parts, each part allocating its buffers once (their zero borders stay
    zero from task to task): small planes cost their arithmetic, not two allocations each."""
    n, c, h, wd = x.shape
    o_ch, _, kh, kw = w.shape
    flat = sh == 1 and sw == 1
    # Strided, undilated: split the padded input into sh*sw phase planes (rows y*sh+a, columns
    # x*sw+b), each of hq rows of wq; tap (i, j) is then a stride-1 tap of phase (i%sh, j%sw) at
    # offset (i//sh, j//sw), one long vector loop again.
    phased = not flat and dh == 1 and dw == 1
    out = np.empty((n, o_ch, oh, ow), dtype=x.dtype) if flat or phased else np.zeros((n, o_ch, oh, ow), x.dtype)
    wp, hp = _vector_width(ow + (kw - 1) * dw, oh), oh + (kh - 1) * dh
    wq, hq = ow + (kw - 1) // sw, oh + (kh - 1) // sh
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        if flat:
            plane = np.zeros((1, hp * wp + (kw - 1) * dw), dtype=x.dtype)
        else:
            plane = np.zeros((sh * sw, hq * wq + (kw - 1) // sw if phased else 0), dtype=x.dtype)
        ext = np.empty(oh * (wp if flat else wq), dtype=x.dtype)
        for t in range(part * tasks // parts, (part + 1) * tasks // parts):
            if flat:
                _fill_padded(plane[0], x[t // c, t % c], pt, pl, wp)
            elif phased:
                _fill_phases(plane, x[t // c, t % c], sh, sw, pt, pl, hq, wq)
            _depthwise_outputs(x, w, out, plane, ext, t, flat, phased, sh, sw, pt, pl, dh, dw, wp, wq)
    return out


@njit(cache=True, error_model="numpy")
def _fill_phases(phases, src, sh, sw, pt, pl, hq, wq):
    """The sh*sw phase planes of the zero-padded ``src`` [h, w] (see ``depthwise``)."""
    h, wd = src.shape
    for e in range(sw):
        lo, hi, off = _valid_run(e, 1, sw, pl, wd, wq)
        for a in range(sh):
            for y in range(hq):
                row = y * sh + a - pt
                if 0 <= row < h and hi > lo:
                    _copy(phases[a * sw + e, y * wq + lo : y * wq + hi], src[row, lo * sw + off :: sw])


@njit(cache=True, inline="always")
def _tap_row(ext, k, src):
    """``ext += sum_j k[j] * src[j:]`` for a row of 3 or 5 adjacent taps in one pass: one load and
    store of ``ext`` per row of taps instead of per tap (small planes: the per-loop cost too)."""
    if k.size == 3:
        a, b, c = k[0], k[1], k[2]
        for q in range(ext.size):
            ext[q] += a * src[q] + b * src[q + 1] + c * src[q + 2]
    else:
        a, b, c, d, e = k[0], k[1], k[2], k[3], k[4]
        for q in range(ext.size):
            ext[q] += a * src[q] + b * src[q + 1] + c * src[q + 2] + d * src[q + 3] + e * src[q + 4]


@njit(cache=True, inline="always")
def _tap_row_2(ext, k, even, odd):
    """``_tap_row`` at column stride 2: tap j reads the phase plane of its parity at offset j // 2."""
    if k.size == 3:
        a, b, c = k[0], k[1], k[2]
        for q in range(ext.size):
            ext[q] += a * even[q] + b * odd[q] + c * even[q + 1]
    else:
        a, b, c, d, e = k[0], k[1], k[2], k[3], k[4]
        for q in range(ext.size):
            ext[q] += a * even[q] + b * odd[q] + c * even[q + 1] + d * odd[q + 1] + e * even[q + 2]


@njit(cache=True, error_model="numpy")
def _depthwise_outputs(x, w, out, plane, ext, t, flat, phased, sh, sw, pt, pl, dh, dw, wp, wq):
    """Task ``t``'s m output planes: long tap loops over its prepared plane (flat or phased), or,
    strided and dilated, each output row with all its taps while it sits in L1."""
    _, c, h, wd = x.shape
    o_ch, _, kh, kw = w.shape
    oh, ow = out.shape[2], out.shape[3]
    mult = o_ch // c
    b, ci = t // c, t % c
    width = wp if flat else wq
    for o in range(ci * mult, (ci + 1) * mult):
        if flat or phased:
            ext[:] = 0
            for i in range(kh):
                if (flat or sw <= 2) and dw == 1 and (kw == 3 or kw == 5):  # a row's taps in one pass
                    if flat or sw == 1:  # adjacent in one plane
                        src = plane[0, i * dh * wp :] if flat else plane[i % sh, (i // sh) * wq :]
                        _tap_row(ext, w[o, 0, i], src)
                    else:  # alternating between the even and odd column phases
                        at = (i // sh) * wq
                        _tap_row_2(ext, w[o, 0, i], plane[(i % sh) * 2, at:], plane[(i % sh) * 2 + 1, at:])
                    continue
                for j in range(kw):
                    if flat:
                        start = i * dh * wp + j * dw
                        _axpy(ext, w[o, 0, i, j], plane[0, start : start + oh * wp])
                    else:
                        start = (i // sh) * wq + j // sw
                        _axpy(ext, w[o, 0, i, j], plane[(i % sh) * sw + j % sw, start : start + oh * wq])
            for y in range(oh):
                _copy(out[b, o, y], ext[y * width : y * width + ow])
            continue
        for y in range(oh):
            for i in range(kh):
                row = y * sh - pt + i * dh
                if row < 0 or row >= h:
                    continue
                for j in range(kw):
                    lo, hi, off = _valid_run(j, dw, sw, pl, wd, ow)
                    _axpy(out[b, o, y, lo:hi], w[o, 0, i, j], x[b, ci, row, lo * sw + off :: sw])


@parallel_kernel
def depthwise_input_grad(g, w, c, h, wd, sh, sw, pt, pl, dh, dw):
    """The adjoint of ``depthwise`` in x: each (image, input channel) gathers its m output planes."""
    n, o_ch, oh, ow = g.shape
    _, _, kh, kw = w.shape
    mult = o_ch // c
    dx = np.zeros((n, c, h, wd), dtype=g.dtype)
    wp, hp = ow + (kw - 1) * dw, oh + (kh - 1) * dh
    for t in prange(n * c):
        b = t // c
        ci = t % c
        if sh == 1 and sw == 1:
            plane = np.zeros(hp * wp + (kw - 1) * dw, dtype=g.dtype)
            ext = np.zeros(oh * wp, dtype=g.dtype)
            for o in range(ci * mult, (ci + 1) * mult):
                _fill_rows(ext, g[b, o], wp)
                for i in range(kh):
                    for j in range(kw):
                        start = i * dh * wp + j * dw
                        _axpy(plane[start : start + oh * wp], w[o, 0, i, j], ext)
            for y in range(min(h, hp - pt)):
                _copy(dx[b, ci, y, : min(wd, wp - pl)], plane[(pt + y) * wp + pl : (pt + y + 1) * wp])
            continue
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
                        dst = dx[b, ci, row, lo * sw + off : (hi - 1) * sw + off + 1 : sw]
                        _axpy(dst, w[o, 0, i, j], g[b, o, y, lo:hi])
    return dx


@parallel_kernel
def depthwise_weight_grad(x, g, kh, kw, sh, sw, pt, pl, dh, dw):
    """``dw[o, 0, i, j]``: one task per output channel (no races), summed over the batch."""
    n, c, h, wd = x.shape
    _, o_ch, oh, ow = g.shape
    mult = o_ch // c
    dwt = np.empty((o_ch, 1, kh, kw), dtype=x.dtype)
    wp, hp = ow + (kw - 1) * dw, oh + (kh - 1) * dh
    for o in prange(o_ch):
        ci = o // mult
        acc = np.zeros((kh, kw))
        flat = sh == 1 and sw == 1
        if flat:
            plane = np.zeros(hp * wp + (kw - 1) * dw, dtype=x.dtype)
            ext = np.zeros(oh * wp, dtype=x.dtype)
        for b in range(n):
            if flat:
                _fill_padded(plane, x[b, ci], pt, pl, wp)
                _fill_rows(ext, g[b, o], wp)
                for i in range(kh):
                    for j in range(kw):
                        start = i * dh * wp + j * dw
                        acc[i, j] += _dot(ext, plane[start : start + oh * wp])
                continue
            for y in range(oh):
                for i in range(kh):
                    row = y * sh - pt + i * dh
                    if row < 0 or row >= h:
                        continue
                    for j in range(kw):
                        lo, hi, off = _valid_run(j, dw, sw, pl, wd, ow)
                        acc[i, j] += _dot(g[b, o, y, lo:hi], x[b, ci, row, lo * sw + off :: sw])
        dwt[o, 0] = acc
    return dwt
