"""Weight gradients of float32 convolutions (strides 1 and 2) as register tiles with the output
channels along the vector lanes: no columns.

``dw[o, c, i, j] = sum over images and output pixels p of g[n, o, p] * x_padded[n, c, tap (i, j) of p]``.
The output gradient is first transposed pixel-major ([N, OH, OW, O]); a band of output rows reads
its input rows as ``pixel_tiles`` does (a zero-bordered buffer and a table of each tap's offset in
it). Per output pixel a tile loads its channels' gradients as whole vectors and broadcasts the input
value of each of its taps: a few taps x a few vectors of channels, the sums in registers over the
band's pixels (only the valid ones: padding that no output reads never enters), added to the result
after each band. Columns would be ``kh*kw`` copies of the input, built in memory and read back by a
GEMM of few rows whose reduction runs over the batch's every pixel (LeNet's 6 -> 16 5x5 layer at
batch 64: 1.1 ms rebuilt from x, 0.57 from the forward's columns, 0.35 here on two threads). Each
tile of the result belongs to one task, which reads every band in the same order: the sums do not
depend on the thread count.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic

from . import njit, parallel_allowed, parallel_kernel
from .cores import free_cores
from .gemm import LANES, _broadcast, _data, _fmuladd, _i64, _k_loop, _load_first, _store_first, _vector_ptr
from .pixel_tiles import fill_band, input_rows, least_padded, plane_width, rows_fitting, tap_offsets


def _tile_intrinsic(taps: int, vectors: int):
    """``tile(src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0)``: for t < taps and lanes
    l < vectors*LANES, ``acc[a0 + t*lda + l] += sum_{y < rows, q < ow} gt[g0 + (y*ow + q)*lda + l] *
    src[offsets[k0 + t] + y*rstride + q]``."""

    def codegen(context, builder, signature, args):
        src_, offsets_, k0, gt_, g0, lda, rows, ow, rstride, acc_, a0 = args
        src = _data(context, builder, signature.args[0], src_)
        offsets = _data(context, builder, signature.args[1], offsets_)
        gt = _data(context, builder, signature.args[3], gt_)
        acc = _data(context, builder, signature.args[9], acc_)
        fmuladd = _fmuladd(builder)
        bases = [
            builder.gep(src, [builder.load(builder.gep(offsets, [builder.add(k0, _i64(t))]))]) for t in range(taps)
        ]
        cells = [
            _vector_ptr(builder, acc, builder.add(builder.add(a0, builder.mul(_i64(t), lda)), _i64(LANES * v)))
            for t in range(taps)
            for v in range(vectors)
        ]

        def row(y, sums):
            # the row's pointers made here, so the pixel loop only steps them (LLVM kept the taps'
            # bases in registers then: o=16 layers 2x faster than with each address rebuilt per pixel)
            sources = [builder.gep(base, [builder.mul(y, rstride)]) for base in bases]
            grads_row = builder.gep(gt, [builder.add(g0, builder.mul(builder.mul(y, ow), lda))])

            def pixel(q, sums):
                grads = builder.gep(grads_row, [builder.mul(q, lda)])
                loaded = [builder.load(_vector_ptr(builder, grads, LANES * v), align=4) for v in range(vectors)]
                updated = []
                for t in range(taps):
                    value = _broadcast(builder, builder.load(builder.gep(sources[t], [q])))
                    updated += [
                        builder.call(fmuladd, [value, loaded[v], sums[t * vectors + v]]) for v in range(vectors)
                    ]
                return updated

            return _k_loop(builder, ow, sums, pixel)

        start = [builder.load(cell, align=4) for cell in cells]
        for cell, total in zip(cells, _k_loop(builder, rows, start, row), strict=True):
            builder.store(total, cell, align=4)
        return context.get_dummy_value()

    @intrinsic
    def tile(typingctx, src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0):
        return types.void(src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0), codegen

    return tile


def _transposed(builder, rows):
    """The LANES x LANES block whose vectors are ``rows``, transposed: log2(LANES) rounds, each pairing
    rows ``size`` apart and swapping their off-diagonal ``size``-lane blocks (one two-source shuffle a
    vector), which leaves the ``size`` x ``size`` blocks to transpose within themselves next."""
    size = LANES // 2
    while size:
        starts = [c - c % (2 * size) for c in range(LANES)]
        within = [c % (2 * size) for c in range(LANES)]
        keep = [s + w if w < size else LANES + s + w - size for s, w in zip(starts, within, strict=True)]
        swap = [s + size + w if w < size else LANES + s + w for s, w in zip(starts, within, strict=True)]
        masks = [ir.Constant(ir.VectorType(ir.IntType(32), LANES), mask) for mask in (keep, swap)]
        out = list(rows)
        for r in range(LANES):
            if not r & size:
                out[r], out[r + size] = (builder.shuffle_vector(rows[r], rows[r + size], mask) for mask in masks)
        rows, size = out, size // 2
    return rows


@intrinsic
def _transpose_block(typingctx, src, s0, sstride, rows, count, dst, d0, dstride):
    """``dst.flat[d0 + p*dstride + r] = src.flat[s0 + r*sstride + p]`` for r < LANES (zero past ``rows``)
    and p < ``count`` (both at most LANES): a block of the output gradient pixel-major, through
    registers (Numba's element loop: ~1.5 ns an element)."""

    def codegen(context, builder, signature, args):
        src_, s0_, sstride_, rows_, count_, dst_, d0_, dstride_ = args
        source = builder.gep(_data(context, builder, signature.args[0], src_), [s0_])
        target = builder.gep(_data(context, builder, signature.args[5], dst_), [d0_])
        zero = _i64(0)
        loaded = []
        for r in range(LANES):
            lanes = builder.select(builder.icmp_signed("<", _i64(r), rows_), count_, zero)
            loaded.append(_load_first(builder, _vector_ptr(builder, source, builder.mul(_i64(r), sstride_)), lanes))
        for p, vector in enumerate(_transposed(builder, loaded)):
            lanes = builder.select(builder.icmp_signed("<", _i64(p), count_), _i64(LANES), zero)
            _store_first(builder, vector, _vector_ptr(builder, target, builder.mul(_i64(p), dstride_)), lanes)
        return context.get_dummy_value()

    sig = types.void(src, types.int64, types.int64, types.int64, types.int64, dst, types.int64, types.int64)
    return sig, codegen


SHAPES = ((8, 1), (8, 2), (8, 3)) if LANES == 16 else ((4, 1), (4, 2), (4, 3))
"""Tiles of (taps, vectors of output channels): per pixel a tile loads its vectors of gradients and
broadcasts one input value per tap. Each tap reads a stream of its own, a pointer in a general
register (x86-64 has 16): ``pixel_tiles``' 24 channels as 24 taps spilled them (LeNet's layer 0.74
against 0.35 ms); 12 or 16 taps measured within noise of 8 on every layer tried."""

_T1, _T2, _T3 = (_tile_intrinsic(taps, vectors) for taps, vectors in SHAPES)
"""``_T{vectors}`` (module globals: what a cached Numba function may call)."""


@njit(cache=True, inline="always")
def _tile(vectors, src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0):
    if vectors == 2:
        _T2(src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0)
    elif vectors == 1:
        _T1(src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0)
    else:
        _T3(src, offsets, k0, gt, g0, lda, rows, ow, rstride, acc, a0)


@parallel_kernel
def weight_tiles(x, g, kh, kw, sh, sw, pt, pl, wq, band_rows, vectors, parts):
    """``acc[(c*kh + i)*kw + j, o]`` (rows past the last tap and channels past the last output
    zero) for NCHW float32 input ``x`` and output gradient ``g``: the tiles split into ``parts``
    contiguous runs, one task each, every task reading every band (its own buffer)."""
    n, c = x.shape[:2]
    o_ch, oh, ow = g.shape[1:]
    taps, span = SHAPES[vectors - 1][0], vectors * LANES
    k = c * kh * kw
    k_pad = (k + taps - 1) // taps * taps
    lda = (o_ch + span - 1) // span * span
    rows_in = input_rows(band_rows, kh, sh, 1)
    offsets = np.zeros(k_pad, dtype=np.int64)  # taps past the last read the first's pixels, into rows dropped
    offsets[:k] = tap_offsets(c, kh, kw, sw, 1, rows_in, wq)
    acc = np.zeros((k_pad, lda), dtype=np.float32)
    flat_acc = acc.reshape(acc.size)
    tiles = (k_pad // taps) * (lda // span)
    bands = (oh + band_rows - 1) // band_rows
    pixels = oh * ow
    gt = np.zeros(n * pixels * lda, dtype=np.float32)  # g pixel-major: [N, OH, OW, lda]
    for b in prange(n):
        for p0 in range(0, pixels, LANES):
            for o0 in range(0, o_ch, LANES):
                source, target = (b * o_ch + o0) * pixels + p0, (b * pixels + p0) * lda + o0
                count = min(LANES, pixels - p0)
                _transpose_block(g, source, pixels, min(LANES, o_ch - o0), count, gt, target, lda)
    for part in prange(parts):
        first, last = tiles * part // parts, tiles * (part + 1) // parts
        buf = np.zeros((c, sw, rows_in, wq), dtype=np.float32)
        flat = buf.reshape(buf.size)
        for task in range(n * bands):
            b, y0 = task // bands, (task % bands) * band_rows
            fill_band(buf, x, b, y0 * sh - pt, pl, sw, 1)
            g0 = (b * pixels + y0 * ow) * lda
            for tile in range(first, last):
                k0, o0 = tile // (lda // span) * taps, tile % (lda // span) * span
                _tile(vectors, flat, offsets, k0, gt, g0 + o0, lda, min(band_rows, oh - y0), ow, sh * wq, flat_acc,
                      k0 * lda + o0)  # fmt: skip
    return acc


PARALLEL_MIN_MACS = 1 << 22
"""From this many multiply-adds (~50 us on one core) the tiles split over every thread while no
other process keeps a core busy (as ``pixel_tiles.PARALLEL_MIN_MACS``)."""


def vectors_for(out_channels: int, k: int) -> int:
    """The tile shape (vectors of channels) that computes the fewest padded sums (channels past the
    last output, taps past the last), the middle one on a tie."""

    def padded(vectors: int) -> int:
        taps, span = SHAPES[vectors - 1][0], vectors * LANES
        return -(-out_channels // span) * span * -(-k // taps) * taps

    return least_padded(padded)


def weight_grad(x: np.ndarray, g: np.ndarray, kernel, stride, pads) -> np.ndarray:
    """``[O, C, kh, kw]`` weight gradient of the float32 NCHW convolution (one group, no dilation,
    strides 1 or 2, padding top / left ``pads[0]`` / ``pads[2]``) of ``x`` whose output gradient is ``g``."""
    (kh, kw), (sh, sw) = kernel, stride
    n, c, _, width = x.shape
    o, oh, ow = g.shape[1:]
    wq = plane_width(width, kw, sw, pads[2], ow)
    rows = max(1, min(oh, rows_fitting(c, sw, wq, kh, sh)))
    k = c * kh * kw
    vectors = vectors_for(o, k)
    parallel = n * o * k * oh * ow >= PARALLEL_MIN_MACS and parallel_allowed() and free_cores() > 1
    parts = numba.get_num_threads() if parallel else 1
    x, g = np.ascontiguousarray(x), np.ascontiguousarray(g)
    acc = weight_tiles.run(parallel, x, g, kh, kw, sh, sw, pads[0], pads[2], wq, rows, vectors, parts)
    return np.ascontiguousarray(acc[:k, :o].T).reshape(o, c, kh, kw)
