"""Convolution kernels (NCHW): col2im for the GEMM path's input gradient, and direct depthwise kernels.

Columns are ``[C*kh*kw, rows*CW]`` (see ``kernels.im2col``: one row per (channel, kernel tap) over a
range of output rows that may span several images, CW the padded input width at stride 1, else
the output width); building them is a NumPy strided copy, and their adjoint, adding overlapping
windows back, is ``col2im``.

Depthwise convolution (one input channel per group) has too little arithmetic per byte for a
GEMM, so it runs directly: each output plane accumulates its kh*kw shifted, scaled input planes.
"""

import numpy as np
from numba import prange, uint64

from . import njit, parallel_kernel


@njit(cache=True, inline="always")
def valid_run(j, dw, sw, pl, w, ow):
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
def _add(dst, src):
    """``dst += src`` over 1-D views as an element loop: Numba's slice operations check overlap and
    broadcasting per call, which costs more than a short run itself; a plain loop vectorises."""
    for q in range(dst.size):
        dst[q] += src[q]


@parallel_kernel
def col2im(cols, out, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, q0, q1):
    """The adjoint of the column copy (``im2col.block_columns``) for output rows ``q0 <= q < q1``
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


def _interleaved(cols):
    """``interleave_taps`` in NumPy (``kernels.background``): one transposing copy."""
    n, c, kh, kw, h, w = cols.shape
    return np.ascontiguousarray(cols.transpose(0, 1, 4, 2, 5, 3)).reshape(n, c, h * kh, w * kw)


@parallel_kernel(reference=_interleaved)
def interleave_taps(cols):
    """``out[n, c, y*kh + i, x*kw + j] = cols[n, c, i, j, y, x]``: the per-tap GEMM results of a
    convolution adjoint whose taps never overlap (kernel = stride), placed in one pass that writes
    each output row in order (flat unsigned offsets: the loops vectorise)."""
    n, c, kh, kw, h, w = cols.shape
    out = np.empty((n, c, h * kh, w * kw), dtype=cols.dtype)
    src, dst = cols.reshape(-1), out.reshape(-1)
    plane = uint64(h * w)
    for t in prange(n * c):
        for y in range(h):
            for i in range(kh):
                row = uint64(((t * h + y) * kh + i) * w * kw)
                _interleave_row(dst, row, src, uint64(((t * kh + i) * kw) * plane + y * w), plane, kw, w)
    return out


@njit(cache=True, inline="always")
def _interleave_row(dst, row, src, tap, step, kw, w):
    """``dst[row + x*kw + j] = src[tap + j*step + x]`` for j < kw, x < w: one output row from its taps'
    rows (``step`` apart), in order; flat unsigned offsets, so the loops vectorise."""
    if kw == 2:  # a constant factor: LLVM interleaves the two taps' vectors
        for x in range(w):
            dst[row + uint64(2 * x)] = src[tap + uint64(x)]
            dst[row + uint64(2 * x + 1)] = src[tap + step + uint64(x)]
        return
    for j in range(kw):
        for x in range(w):
            dst[row + uint64(x * kw + j)] = src[tap + uint64(j) * step + uint64(x)]


def _placed_reference(g, w2, c, kh, kw):
    n, o, oh, ow = g.shape
    return _interleaved(np.matmul(w2.T, g.reshape(n, o, -1)).reshape(n, c, kh, kw, oh, ow))


@parallel_kernel(reference=_placed_reference)
def placed_taps(g, w2, c, kh, kw):
    """``out[n, ci, y*kh + i, x*kw + j] = sum_k w2[k, (ci*kh + i)*kw + j] * g[n, k, y, x]``: the adjoint
    of a convolution whose kernel is its stride, for few taps (``c*kh*kw``): a task per row of g sums
    every tap's row (k outermost, each g row read once, the x loop vectorised), then places them.
    OpenBLAS takes such a product, [4, 24] x [24, 51200] for PP-OCR det's last layer, at a fraction
    of the memory speed that bounds it (0.42 ms; here ~0.2)."""
    n, o, oh, ow = g.shape
    taps = c * kh * kw
    out = np.empty((n, c, oh * kh, ow * kw), dtype=g.dtype)
    dst = out.reshape(-1)
    tasks = n * oh
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        acc = np.empty((taps, ow), dtype=g.dtype)
        src = acc.reshape(-1)
        for task in range(part * tasks // parts, (part + 1) * tasks // parts):
            b, y = task // oh, task % oh
            acc[:] = 0
            for k in range(o):
                row = g[b, k, y]
                for t in range(taps):
                    weight, sums = w2[k, t], acc[t]
                    for x in range(ow):
                        sums[x] += weight * row[x]
            for ci in range(c):
                for i in range(kh):
                    line = uint64((((b * c + ci) * oh + y) * kh + i) * ow * kw)
                    _interleave_row(dst, line, src, uint64((ci * kh + i) * kw * ow), uint64(ow), kw, ow)
    return out


@njit(cache=True, inline="always")
def _vector_width(wp, rows):
    """``wp`` widened (by at most a sixteenth) so that ``rows * wp`` is a multiple of 16: a small
    plane's tap loops then end on a full AVX-512 vector, not a scalar tail (PP-OCR cls's 2-row
    planes: 200 -> 208 elements; 0.56 -> 0.45 ms for its [6, 200, 2, 96] 5x5, within this VM's noise)."""
    for extra in range(wp // 16 + 1):
        if (rows * (wp + extra)) % 16 == 0:
            return wp + extra
    return wp


_PARTS = 64
"""Per-plane tasks (depthwise, the Winograd transforms) are split into at most this many parts
(buffers per part; several per thread)."""


@parallel_kernel
def depthwise(x, w, sh, sw, pt, pl, dh, dw, oh, ow):
    """``out[n, o] = sum_ij w[o, 0, i, j] * shifted x[n, o // m]`` for [O = C*m, 1, kh, kw] weights;
    one task per (image, input channel), its prepared input shared by the m outputs it feeds.

    The zero-padded input is split into sh*sw phase planes (rows y*sh + a, columns q*sw + e; one
    plane at stride 1), each of hq rows of wq. Tap (i, j) then reads phase ((i*dh) % sh, (j*dw) % sw)
    at offset ((i*dh) // sh, (j*dw) // sw) for every output, so a tap is ONE long vector loop over
    rows of wq (the last columns of each row are junk, cropped at the end), not a short run per
    output row. Tasks run in ``_PARTS`` parts, each allocating its buffers once (their zero borders
    stay zero from task to task): small planes cost their arithmetic, not two allocations each."""
    n, c, h, wd = x.shape
    o_ch = w.shape[0]
    out = np.empty((n, o_ch, oh, ow), dtype=x.dtype)
    hq, wq, size, rows, cols = _phase_layout(w.shape[2], w.shape[3], sh, sw, pt, dh, dw, h, oh, ow)
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        phases = np.zeros(sh * sw * size, dtype=x.dtype)
        ext = np.empty(oh * wq, dtype=x.dtype)
        for t in range(part * tasks // parts, (part + 1) * tasks // parts):
            _fill_phases(phases, x, t, sh, sw, pt, pl, hq, wq, size)
            for o in range(t % c * (o_ch // c), (t % c + 1) * (o_ch // c)):
                _plane_taps(ext, phases, w, o, rows, cols, sw, dw)
                for y in range(oh):
                    for q in range(ow):
                        out[t // c, o, y, q] = ext[uint64(y * wq + q)]
    return out


# The task loop passes whole buffers with offsets, not slices: each view costs two atomic reference
# count updates, which were 60% of a 2-row plane's time. Numba drops the updates of a function's
# array arguments only where nothing else on the way releases a reference, so the helpers take no
# views, a helper's arrays live to its end, and the tap helpers are inlined (a call's error path
# would keep the caller's updates). Offsets are cast to uint64 so that Numba leaves out its
# negative-index wraparound, which would stop the loops vectorising.


@njit(cache=True, error_model="numpy")
def _fill_phases(phases, x, t, sh, sw, pt, pl, hq, wq, size):
    """The sh*sw phase planes of task t's zero-padded input x[t // C, t % C] (see ``depthwise``);
    only the image part is written, so the zero border stays from task to task."""
    c, h, wd = x.shape[1], x.shape[2], x.shape[3]
    b, ch = t // c, t % c
    for a in range(sh):
        y0, y1, row0 = valid_run(a, 1, sh, pt, h, hq)
        if sw == 2:
            _fill_phase_pair(phases, x, b, ch, a * 2 * size, y0, y1, sh, row0, pl, wq, size)
            continue
        for e in range(sw):
            q0, q1, col0 = valid_run(e, 1, sw, pl, wd, wq)
            for y in range(y0, y1):
                _copy_phase(phases, x, b, ch, y * sh + row0, (a * sw + e) * size + y * wq, q0, q1, sw, col0)


@njit(cache=True, inline="always")
def _fill_phase_pair(phases, x, b, ch, base, y0, y1, sh, row0, pl, wq, size):
    """Rows y0 <= y < y1 of both column phases at stride 2, in one pass where both are inside the
    image: LLVM turns that pair of stride-2 loads into vector loads and shuffles, where one phase at
    a time is a scalar gather (PP-OCR det's [1, 32, 368, 368] stride-2 conv: 4.4 -> 1.6 ms)."""
    wd = x.shape[3]
    lo0, hi0, off0 = valid_run(0, 1, 2, pl, wd, wq)
    lo1, hi1, off1 = valid_run(1, 1, 2, pl, wd, wq)
    lo, hi = max(lo0, lo1), max(max(lo0, lo1), min(hi0, hi1))
    for y in range(y0, y1):
        dst, row = base + y * wq, y * sh + row0
        for q in range(lo, hi):
            phases[uint64(dst + q)] = x[b, ch, row, uint64(2 * q + off0)]
            phases[uint64(dst + size + q)] = x[b, ch, row, uint64(2 * q + off1)]
        _copy_phase(phases, x, b, ch, row, dst, lo0, min(lo, hi0), 2, off0)
        _copy_phase(phases, x, b, ch, row, dst, max(hi, lo0), hi0, 2, off0)
        _copy_phase(phases, x, b, ch, row, dst + size, lo1, min(lo, hi1), 2, off1)
        _copy_phase(phases, x, b, ch, row, dst + size, max(hi, lo1), hi1, 2, off1)


@njit(cache=True, inline="always")
def _copy_phase(phases, x, b, ch, row, dst, q0, q1, sw, col0):
    """Columns ``q*sw + col0`` of input row ``row`` into ``phases[dst + q]``, q0 <= q < q1."""
    for q in range(q0, q1):
        phases[uint64(dst + q)] = x[b, ch, row, uint64(q * sw + col0)]


@njit(cache=True)
def _phase_layout(kh, kw, sh, sw, pt, dh, dw, h, oh, ow):
    """The phase planes of ``depthwise`` (hq rows of wq, ``size`` apart: a plane and the tail its
    last taps read) and the tap table that reads them, shared by the forward and both gradients."""
    wq = _vector_width(ow + (kw - 1) * dw // sw, oh)
    hq = oh + (kh - 1) * dh // sh
    size = hq * wq + (kw - 1) * dw // sw
    rows, cols = _tap_table(kh, kw, sh, sw, pt, dh, dw, h, oh, wq, size)
    return hq, wq, size, rows, cols


@njit(cache=True, error_model="numpy")
def _tap_table(kh, kw, sh, sw, pt, dh, dw, h, oh, wq, size):
    """Where each tap reads, worked out once per call, not per plane (a plane of PP-OCR cls's 2-row
    5x5 convs has so little arithmetic that the divisions by runtime strides were most of it): per
    row of taps i, the ``ext`` offset and length of the output rows whose input row lies inside the
    image, and where tap (i, 0) reads for the first of them; per column tap j, its offset from there."""
    rows = np.empty((kh, 3), dtype=np.uint64)
    for i in range(kh):
        lo, hi, _ = valid_run(i, dh, sh, pt, h, oh)
        rows[i, 0], rows[i, 1] = lo * wq, (hi - lo) * wq
        rows[i, 2] = ((i * dh) % sh) * sw * size + (lo + i * dh // sh) * wq
    cols = np.empty(kw, dtype=np.uint64)
    for j in range(kw):
        cols[j] = ((j * dw) % sw) * size + (j * dw) // sw
    return rows, cols


@njit(cache=True, error_model="numpy")
def _plane_taps(ext, phases, w, o, rows, cols, sw, dw):
    """Output plane ``o`` into ``ext`` (rows of wq), a row of taps in passes of 5, 3 or 1 adjacent
    taps (one load and store of ``ext`` per pass, not per tap), each row of taps only over the
    output rows that read the image (``_tap_table``): on PP-OCR cls's 2-row planes most rows of a
    5x5 kernel's outer tap rows read nothing but the zero border."""
    kh, kw = w.shape[2], w.shape[3]
    for q in range(ext.size):
        ext[q] = 0
    for i in range(kh):
        e0, n, row = rows[i, 0], rows[i, 1], rows[i, 2]
        if kw == 7 and sw == 1 and dw == 1:
            _add_7_taps(ext, phases, w, o, i, e0, n, row + cols[0])
            continue
        fives = kw - kw % 5
        threes = fives + 3 if kw - fives >= 3 else fives
        for j in range(0, fives, 5):
            _add_5_taps(ext, phases, w, o, i, j, e0, n, row, cols, sw, dw)
        for j in range(fives, threes, 3):
            _add_3_taps(ext, phases, w, o, i, j, e0, n, row, cols, sw, dw)
        for j in range(threes, kw):
            _add_tap(ext, phases, w, o, i, j, e0, n, row, cols)


@njit(cache=True, error_model="numpy", inline="always")
def _add_tap(ext, phases, w, o, i, j, e0, n, row, cols):
    """``ext[e0 + q] += w[o, 0, i, j] * (tap (i, j)'s input)`` for q < n."""
    a, sa = w[o, 0, i, j], row + cols[j]
    for q in range(n):
        ext[uint64(e0 + q)] += a * phases[uint64(sa + q)]


@njit(cache=True, error_model="numpy", inline="always")
def _add_3_taps(ext, phases, w, o, i, j, e0, n, row, cols, sw, dw):
    """``_add_tap`` for taps j, j+1 and j+2 in one pass (adjacent taps: see ``_add_5_taps``)."""
    a, sa = w[o, 0, i, j], row + cols[j]
    b, sb = w[o, 0, i, j + 1], row + cols[j + 1]
    c, sc = w[o, 0, i, j + 2], row + cols[j + 2]
    if sw == 1 and dw == 1:
        for q in range(n):
            ext[uint64(e0 + q)] += (
                a * phases[uint64(sa + q)] + b * phases[uint64(sa + q + 1)] + c * phases[uint64(sa + q + 2)]
            )
    else:
        for q in range(n):
            ext[uint64(e0 + q)] += a * phases[uint64(sa + q)] + b * phases[uint64(sb + q)] + c * phases[uint64(sc + q)]


@njit(cache=True, error_model="numpy", inline="always")
def _add_5_taps(ext, phases, w, o, i, j, e0, n, row, cols, sw, dw):
    """``_add_tap`` for taps j to j+4 in one pass. Adjacent taps (sw = dw = 1) are read at one
    offset: LLVM then checks one source range for overlap with ``ext`` before the loop, not five,
    which is most of a short loop's cost (PP-OCR cls's 5x5 convs: 5-20%)."""
    a, sa = w[o, 0, i, j], row + cols[j]
    b, sb = w[o, 0, i, j + 1], row + cols[j + 1]
    c, sc = w[o, 0, i, j + 2], row + cols[j + 2]
    d, sd = w[o, 0, i, j + 3], row + cols[j + 3]
    f, sf = w[o, 0, i, j + 4], row + cols[j + 4]
    if sw == 1 and dw == 1:
        for q in range(n):
            ext[uint64(e0 + q)] += (
                a * phases[uint64(sa + q)]
                + b * phases[uint64(sa + q + 1)]
                + c * phases[uint64(sa + q + 2)]
                + d * phases[uint64(sa + q + 3)]
                + f * phases[uint64(sa + q + 4)]
            )
    else:
        for q in range(n):
            ext[uint64(e0 + q)] += (
                a * phases[uint64(sa + q)]
                + b * phases[uint64(sb + q)]
                + c * phases[uint64(sc + q)]
                + d * phases[uint64(sd + q)]
                + f * phases[uint64(sf + q)]
            )


@njit(cache=True, error_model="numpy", inline="always")
def _add_7_taps(ext, phases, w, o, i, e0, n, start):
    """A row of seven adjacent taps (stride and dilation 1) in one pass, from ``start``: a 7x7 kernel
    in 7 passes over ``ext``, not 21 (5 + 1 + 1 a row). PP-OCRv6 det's [1, 96, 184, 184]: see
    ``depthwise``."""
    a, b, c, d = w[o, 0, i, 0], w[o, 0, i, 1], w[o, 0, i, 2], w[o, 0, i, 3]
    f, g, h = w[o, 0, i, 4], w[o, 0, i, 5], w[o, 0, i, 6]
    for q in range(n):
        ext[uint64(e0 + q)] += (
            a * phases[uint64(start + q)] + b * phases[uint64(start + q + 1)] + c * phases[uint64(start + q + 2)]
            + d * phases[uint64(start + q + 3)] + f * phases[uint64(start + q + 4)]
            + g * phases[uint64(start + q + 5)] + h * phases[uint64(start + q + 6)]
        )  # fmt: skip


# The gradients use the forward's phase planes at any stride: the input gradient runs the tap loop's
# adjoint into zeroed phase planes and reads their image part back (each input element lies in one
# phase), the weight gradient dots the output gradient with the input's phase planes. A tap is then
# one long loop over rows of wq at stride 2 as at stride 1, where a strided short run per output row
# cost 5-10x the forward (PicoDet's 5x5 stride-2 convs).


@njit(cache=True, error_model="numpy")
def _fill_ext(ext, g, b, o, wq):
    """Output gradient plane g[b, o] into rows of ``wq`` (the junk columns stay zero)."""
    for y in range(g.shape[2]):
        for q in range(g.shape[3]):
            ext[uint64(y * wq + q)] = g[b, o, y, q]


@njit(cache=True, error_model="numpy")
def _plane_taps_adjoint(phases, ext, w, o, rows, cols):
    """The adjoint of ``_plane_taps`` in its input: ``phases[tap (i, j) + q] += w[o, 0, i, j] * ext[q]``."""
    for i in range(w.shape[2]):
        e0, n, row = rows[i, 0], rows[i, 1], rows[i, 2]
        for j in range(w.shape[3]):
            a, s = w[o, 0, i, j], row + cols[j]
            for q in range(n):
                phases[uint64(s + q)] += a * ext[uint64(e0 + q)]


@njit(cache=True, error_model="numpy")
def _read_phases(dx, phases, t, sh, sw, pt, pl, hq, wq, size):
    """The adjoint of ``_fill_phases``: task t's image part of the phase planes into dx[t // C, t % C]
    (elements that no phase holds, which no output reads, keep dx's zeros)."""
    c, h, wd = dx.shape[1], dx.shape[2], dx.shape[3]
    b, ch = t // c, t % c
    for a in range(sh):
        y0, y1, row0 = valid_run(a, 1, sh, pt, h, hq)
        for e in range(sw):
            q0, q1, col0 = valid_run(e, 1, sw, pl, wd, wq)
            for y in range(y0, y1):
                src = (a * sw + e) * size + y * wq
                for q in range(q0, q1):
                    dx[b, ch, y * sh + row0, uint64(q * sw + col0)] = phases[uint64(src + q)]


def depthwise_input_grad(g, w, c, h, wd, sh, sw, pt, pl, dh, dw):
    """The adjoint of ``depthwise`` in x. At stride 1 with one output per channel it is itself a
    depthwise convolution, of g with the kernel flipped and padded (k-1)*d - p, which runs the
    forward's fused taps (one load and store per 3 or 5 taps, not per tap: [16, 64, 48, 48] 3x3
    3.2 -> 2.3 ms at one thread); else ``_depthwise_input_grad_phases``."""
    kh, kw = w.shape[2], w.shape[3]
    ft, fl = (kh - 1) * dh - pt, (kw - 1) * dw - pl
    if sh == 1 and sw == 1 and w.shape[0] == c and ft >= 0 and fl >= 0:
        return depthwise(g, np.ascontiguousarray(w[:, :, ::-1, ::-1]), 1, 1, ft, fl, dh, dw, h, wd)
    return _depthwise_input_grad_phases(g, w, c, h, wd, sh, sw, pt, pl, dh, dw)


@parallel_kernel
def _depthwise_input_grad_phases(g, w, c, h, wd, sh, sw, pt, pl, dh, dw):
    """Each (image, input channel) gathers its m output planes into its phase planes (tasks in
    ``_PARTS`` parts, as the forward)."""
    n, o_ch, oh, ow = g.shape
    mult = o_ch // c
    dx = np.zeros((n, c, h, wd), dtype=g.dtype)
    hq, wq, size, rows, cols = _phase_layout(w.shape[2], w.shape[3], sh, sw, pt, dh, dw, h, oh, ow)
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        phases = np.empty(sh * sw * size, dtype=g.dtype)
        ext = np.zeros(oh * wq, dtype=g.dtype)
        for t in range(part * tasks // parts, (part + 1) * tasks // parts):
            phases[:] = 0
            for o in range(t % c * mult, (t % c + 1) * mult):
                _fill_ext(ext, g, t // c, o, wq)
                _plane_taps_adjoint(phases, ext, w, o, rows, cols)
            _read_phases(dx, phases, t, sh, sw, pt, pl, hq, wq, size)
    return dx


@njit(cache=True, fastmath=True, error_model="numpy")
def _tap_dots(acc, ext, phases, rows, cols):
    """``acc[i, j] += ext . (tap (i, j)'s input)`` in the input's dtype, as BLAS does, three taps of
    a row per pass (one load of ``ext`` for three dots); fastmath lets each dot vectorise into
    several partial sums (float32 keeps its accuracy at twice float64's lanes)."""
    kw = acc.shape[1]
    zero = phases.dtype.type(0)
    for i in range(acc.shape[0]):
        e0, n, row = rows[i, 0], rows[i, 1], rows[i, 2]
        for j in range(0, kw - kw % 3, 3):
            sa, sb, sc = row + cols[j], row + cols[j + 1], row + cols[j + 2]
            da, db, dc = zero, zero, zero
            for q in range(n):
                e = ext[uint64(e0 + q)]
                da += e * phases[uint64(sa + q)]
                db += e * phases[uint64(sb + q)]
                dc += e * phases[uint64(sc + q)]
            acc[i, j] += da
            acc[i, j + 1] += db
            acc[i, j + 2] += dc
        for j in range(kw - kw % 3, kw):
            s = row + cols[j]
            d = zero
            for q in range(n):
                d += ext[uint64(e0 + q)] * phases[uint64(s + q)]
            acc[i, j] += d


@parallel_kernel
def depthwise_weight_grad(x, g, kh, kw, sh, sw, pt, pl, dh, dw):
    """``dw[o, 0, i, j]``: one task per output channel (no races), summed over the batch in float64."""
    n, c, h, wd = x.shape
    _, o_ch, oh, ow = g.shape
    mult = o_ch // c
    dwt = np.empty((o_ch, 1, kh, kw), dtype=x.dtype)
    hq, wq, size, rows, cols = _phase_layout(kh, kw, sh, sw, pt, dh, dw, h, oh, ow)
    for o in prange(o_ch):
        acc = np.zeros((kh, kw))
        phases = np.zeros(sh * sw * size, dtype=x.dtype)
        ext = np.zeros(oh * wq, dtype=x.dtype)
        for b in range(n):
            _fill_phases(phases, x, b * c + o // mult, sh, sw, pt, pl, hq, wq, size)
            _fill_ext(ext, g, b, o, wq)
            _tap_dots(acc, ext, phases, rows, cols)
        dwt[o, 0] = acc
    return dwt
