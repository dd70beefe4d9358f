"""Float32 depthwise convolutions (3x3, 5x5, 7x7 at strides 1, 2 and (2, 1)) as register tiles.

``conv.depthwise`` adds one row of taps at a time into an output plane in memory: per tap row a
load and a store of every output, and LLVM keeps the taps' products apart (no fused multiply-add),
so it runs at a third of the FMA units' speed (PP-LCNet's 5x5 over [128, 100, 76]: 1.3 ms on one
thread, onnxruntime's NCHWc kernel 0.2-1.0 ms). Here a tile of ``ROWS`` output rows x one or two
vectors keeps its sums in registers over all k*k taps (LLVM vector IR, a Numba intrinsic, as
``gemm``'s micro-kernel): each input vector is loaded once per tile and feeds every output row of
the tile whose taps reach it, with ``llvm.fmuladd``. Each sum runs in tap order (row by row), one
rounding per tap as a fused multiply-add gives.

A task splits one zero-padded input plane into ``conv.depthwise``'s phase planes (one at stride 1,
four at stride 2, two at (2, 1), PP-OCR rec's and cls's height-only stride: 148 -> 100 us for cls's
5x5 over [6, 104, 3, 96]), whose rows are a whole number of vectors plus the taps' reach and whose
row count is a whole number of tiles, so that every tile reads inside them. Tiles write the output in
place, a row's last one with masked stores and a band's last rows only where they exist; planes of
one or two rows (PP-OCR cls's and rec's last stages) take tiles of ``SHORT_ROWS`` rows, whose work
is half a full tile's (cls's 5x5 over [6, 200, 2, 96]: 0.22 -> 0.14 ms on one thread).
"""

from __future__ import annotations

import numpy as np
from numba import prange, types
from numba.extending import intrinsic

from . import njit, parallel_kernel
from .conv import _PARTS, _fill_phases
from .gemm import LANES, _broadcast, _data, _fmuladd, _i64, _store_first, _vector_ptr

ROWS = 4
"""Output rows per tile: with two vectors, 8 accumulators, two loaded vectors and a broadcast fit
AVX2's 16 registers."""
SHORT_ROWS = 2
"""Rows of the tiles for a band of at most this many rows (two vectors wide only)."""

KERNELS = (3, 5, 7)
STRIDES = ((1, 1), (2, 2), (2, 1))
"""Square kernel sizes and (row, column) strides with a tile kernel; others take ``conv.depthwise``."""


def _tile_intrinsic(k: int, stride: tuple[int, int], vectors: int, height: int = ROWS):
    """``tile(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)``: for r < min(rows, height) and
    lanes l < min(cols, vectors*LANES),
    ``dst[d0 + r*dstep + l] = sum_{i, j < k} w[w0 + i*k + j] * src[s0 + tap(i, j) + r*sstep + l]``
    where tap (i, j) reads phase plane ``(i % sh, j % sw)`` (``psize`` apart) at row ``i // sh`` and
    column ``j // sw``: a convolution of strides (sh, sw) = ``stride`` over phase planes
    (``conv.depthwise``'s layout). All ``height`` rows and ``vectors`` vectors are read and summed."""
    sh, sw = stride

    def codegen(context, builder, signature, args):
        src_, s0, sstep, psize, w_, w0, dst_, d0, dstep, rows_, cols_ = args
        src = _data(context, builder, signature.args[0], src_)
        w = _data(context, builder, signature.args[4], w_)
        dst = _data(context, builder, signature.args[6], dst_)
        fmuladd = _fmuladd(builder)
        const = _i64

        weights = {}

        def weight(i, j):
            """Tap (i, j)'s weight in every lane, loaded at its first use."""
            if (i, j) not in weights:
                weights[i, j] = _broadcast(builder, builder.load(builder.gep(w, [builder.add(w0, const(i * k + j))])))
            return weights[i, j]

        # input rows in order, each vector used by every output row it reaches while loaded (short
        # live ranges: no spills); each output row still sums its taps in (i, j) order
        sums = [[None] * vectors for _ in range(height)]
        for row in range(height + (k - 1) // sh):
            for a in range(sh):
                for j in range(k):
                    offset = builder.mul(const(a * sw + j % sw), psize)
                    offset = builder.add(builder.add(s0, offset), builder.mul(const(row), sstep))
                    loaded = [
                        builder.load(
                            _vector_ptr(builder, src, builder.add(offset, const(j // sw + LANES * v))), align=4
                        )
                        for v in range(vectors)
                    ]
                    for r in range(height):
                        i = (row - r) * sh + a
                        if not 0 <= i < k:
                            continue
                        for v in range(vectors):
                            before = sums[r][v]
                            sums[r][v] = (
                                builder.fmul(weight(i, j), loaded[v])
                                if before is None
                                else builder.call(fmuladd, [weight(i, j), loaded[v], before])
                            )
        whole = builder.icmp_signed(">=", cols_, const(vectors * LANES))
        for r in range(height):
            with builder.if_then(builder.icmp_signed("<", const(r), rows_)):
                row = builder.add(d0, builder.mul(const(r), dstep))
                with builder.if_else(whole) as (full, part):
                    with full:
                        for v in range(vectors):
                            builder.store(
                                sums[r][v], _vector_ptr(builder, dst, builder.add(row, const(LANES * v))), align=4
                            )
                    with part:  # a row's last tile: the lanes inside the row
                        for v in range(vectors):
                            lanes = builder.sub(cols_, const(LANES * v))
                            lanes = builder.select(builder.icmp_signed("<", lanes, const(0)), const(0), lanes)
                            pointer = _vector_ptr(builder, dst, builder.add(row, const(LANES * v)))
                            _store_first(builder, sums[r][v], pointer, lanes)
        return context.get_dummy_value()

    @intrinsic
    def tile(typingctx, src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols):
        return types.void(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols), codegen

    return tile


_T3_1_2, _T3_1_1, _T3_2_2, _T3_2_1, _T3_21_2, _T3_21_1 = (
    _tile_intrinsic(3, s, v) for s in STRIDES for v in (2, 1)
)  # fmt: skip
_T5_1_2, _T5_1_1, _T5_2_2, _T5_2_1, _T5_21_2, _T5_21_1 = (
    _tile_intrinsic(5, s, v) for s in STRIDES for v in (2, 1)
)  # fmt: skip
_T7_1_2, _T7_1_1, _T7_2_2, _T7_2_1, _T7_21_2, _T7_21_1 = (
    _tile_intrinsic(7, s, v) for s in STRIDES for v in (2, 1)
)  # fmt: skip
_S3_1, _S3_2, _S3_21, _S5_1, _S5_2, _S5_21, _S7_1, _S7_2, _S7_21 = (
    _tile_intrinsic(k, s, 2, SHORT_ROWS) for k in KERNELS for s in STRIDES
)  # fmt: skip
"""``_T{k}_{stride}_{vectors}``, and ``_S{k}_{stride}`` of ``SHORT_ROWS`` rows, the stride 1, 2 or 21
for (2, 1) (module globals: what a cached Numba function may call)."""


def supported(x: np.ndarray, w: np.ndarray, stride, dil) -> bool:
    """Whether ``depthwise`` serves this convolution (the tiles read both arrays as float32)."""
    kh, kw = w.shape[2], w.shape[3]
    float32 = x.dtype == np.float32 and w.dtype == np.float32
    return float32 and kh == kw and kh in KERNELS and tuple(stride) in STRIDES and tuple(dil) == (1, 1)


@njit(cache=True, inline="always")
def _round_up(value, multiple):
    return -(-value // multiple) * multiple


@njit(cache=True, inline="always")
def _tile(k, sh, sw, short, vectors, src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols):
    """The tile intrinsic for kernel size ``k``, strides (sh, sw) and ``vectors`` vectors: ``SHORT_ROWS``
    rows of two vectors where ``short``, else ``ROWS`` rows."""
    if short and k == 3 and sh == 1 and sw == 1:
        _S3_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 3 and sh == 2 and sw == 2:
        _S3_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 3 and sh == 2 and sw == 1:
        _S3_21(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 5 and sh == 1 and sw == 1:
        _S5_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 5 and sh == 2 and sw == 2:
        _S5_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 5 and sh == 2 and sw == 1:
        _S5_21(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 7 and sh == 1 and sw == 1:
        _S7_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 7 and sh == 2 and sw == 2:
        _S7_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif short and k == 7 and sh == 2 and sw == 1:
        _S7_21(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 1 and sw == 1 and vectors == 2:
        _T3_1_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 1 and sw == 1 and vectors == 1:
        _T3_1_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 2 and sw == 2 and vectors == 2:
        _T3_2_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 2 and sw == 2 and vectors == 1:
        _T3_2_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 2 and sw == 1 and vectors == 2:
        _T3_21_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 3 and sh == 2 and sw == 1 and vectors == 1:
        _T3_21_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 1 and sw == 1 and vectors == 2:
        _T5_1_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 1 and sw == 1 and vectors == 1:
        _T5_1_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 2 and sw == 2 and vectors == 2:
        _T5_2_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 2 and sw == 2 and vectors == 1:
        _T5_2_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 2 and sw == 1 and vectors == 2:
        _T5_21_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 5 and sh == 2 and sw == 1 and vectors == 1:
        _T5_21_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 1 and sw == 1 and vectors == 2:
        _T7_1_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 1 and sw == 1 and vectors == 1:
        _T7_1_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 2 and sw == 2 and vectors == 2:
        _T7_2_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 2 and sw == 2 and vectors == 1:
        _T7_2_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 2 and sw == 1 and vectors == 2:
        _T7_21_2(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)
    elif k == 7 and sh == 2 and sw == 1 and vectors == 1:
        _T7_21_1(src, s0, sstep, psize, w, w0, dst, d0, dstep, rows, cols)


@njit(cache=True)
def _plane_tiles(phases, wq, size, sh, sw, w, w0, k, out, base, oh, ow):
    """Output plane ``out[base:base + oh*ow]`` from its padded input's phase planes (rows of ``wq``):
    two-vector tiles across each band of ROWS rows (SHORT_ROWS rows for a band that short), one
    vector for an odd last one, each writing only the rows and columns inside the plane."""
    for y0 in range(0, oh, ROWS):
        rows = min(ROWS, oh - y0)
        short = rows <= SHORT_ROWS
        q = 0
        while q < ow:
            vectors = 2 if short or q + LANES < ow else 1
            start, at = y0 * wq + q, base + y0 * ow + q
            _tile(k, sh, sw, short, vectors, phases, start, wq, size, w, w0, out, at, ow, rows, ow - q)
            q += vectors * LANES


@parallel_kernel
def depthwise(x, w, sh, sw, pt, pl, oh, ow):
    """``out[n, o] = sum_ij w[o, 0, i, j] * padded x[n, o // m][y*sh + i, q*sw + j]`` for [C*m, 1, k, k]
    float32 weights, dilation 1 (see the module docstring)."""
    n, c = x.shape[0], x.shape[1]
    o_ch, k = w.shape[0], w.shape[2]
    m = o_ch // c
    wq = _round_up(_round_up(ow, 2 * LANES) + (k - 1) // sw, LANES)  # room for a short band's two-vector tiles
    hq = _round_up(oh, ROWS) + (k - 1) // sh
    size = hq * wq
    flat = w.reshape(o_ch * k * k)
    out = np.empty((n, o_ch, oh, ow), dtype=np.float32)
    target = out.reshape(out.size)
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        phases = np.zeros(sh * sw * size, dtype=np.float32)  # the zero border stays from task to task
        for t in range(part * tasks // parts, (part + 1) * tasks // parts):
            _fill_phases(phases, x, t, sh, sw, pt, pl, hq, wq, size)
            for o in range(t % c * m, (t % c + 1) * m):
                base = (t // c * o_ch + o) * oh * ow
                _plane_tiles(phases, wq, size, sh, sw, flat, o * k * k, k, target, base, oh, ow)
    return out
