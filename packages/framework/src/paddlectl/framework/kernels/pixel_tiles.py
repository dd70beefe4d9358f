"""Stride-1 float32 convolutions as register tiles with the output pixels along the vector lanes.

``conv_tiles`` puts output channels in the lanes: a layer whose channels are not a whole number of
vectors wastes the rest (PP-OCRv4 det's 24-channel 3x3 layers fill 24 of 32 AVX-512 lanes) and its
pixel-major result needs a transpose to NCHW. Here a tile is ``ROWS`` output channels x ``VECTORS``
vectors of neighbouring pixels of one output row: per (input channel, tap) ``VECTORS`` unaligned
loads of the input row, one broadcast weight per channel and ``ROWS * VECTORS`` fused multiply-adds,
the sums in registers over the whole reduction (as ``gemm``'s micro-kernel), stored straight into
the NCHW result. Every lane does useful work wherever the row is a whole number of tiles; a tile
past the row's end or the last channel computes into a scratch tile and its part inside is copied.
The input is read in place, as in ``conv_tiles``: each band of output rows copies the input rows it
reads into a zero-bordered buffer (the padding), and a table holds the taps' offsets in it.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic

from . import njit, parallel_allowed, parallel_kernel
from .conv_tiles import BAND_BYTES, PARTS, _fill
from .gemm import _VECTOR, LANES, _broadcast, _data, _fmuladd

VECTORS = 2
ROWS = 12 if LANES == 16 else 6
"""A tile: ``ROWS`` channels x ``VECTORS`` vectors of pixels. Its accumulators, the loaded input
vectors and a broadcast fill the register file (AVX-512's 32 registers, else AVX2's 16)."""

SPAN = VECTORS * LANES
"""Output pixels of a row per tile."""

MIN_BANDS = 8
MIN_BAND_ROWS = 4
"""An image is cut into bands of at most ``BAND_BYTES`` of input rows and into at least ``MIN_BANDS``
bands (of at least ``MIN_BAND_ROWS`` rows: a band reads ``kh - 1`` rows more than it makes), so that
two threads share a small image evenly."""

PARALLEL_MIN_MACS = 1 << 22
"""Layers from this many multiply-adds (~50 us on one core) run on every thread: the parallel
variant is chosen by work, not by the input's size (a deep layer has a small input and much work)."""

_I64 = ir.IntType(64)


def _tile_intrinsic():
    """``tile(src, start, offsets, w, w0, k, dst, d0, dstep)``: for r < ROWS and lanes l < SPAN,
    ``dst[d0 + r*dstep + l] = sum_kk w[w0 + kk*ROWS + r] * src[start + offsets[kk] + l]``."""

    def codegen(context, builder, signature, args):
        src_, start, offsets_, w_, w0, k, dst_, d0, dstep = args
        src = _data(context, builder, signature.args[0], src_)
        offsets = _data(context, builder, signature.args[2], offsets_)
        w = _data(context, builder, signature.args[3], w_)
        dst = _data(context, builder, signature.args[6], dst_)
        fmuladd = _fmuladd(builder)

        def const(value):
            return ir.Constant(_I64, value)

        def vector_at(base, offset):
            return builder.bitcast(builder.gep(base, [const(offset)]), _VECTOR.as_pointer())

        base = builder.gep(src, [start])
        zero = ir.Constant(_VECTOR, [0.0] * LANES)
        entry = builder.block
        loop, done = builder.append_basic_block("k_loop"), builder.append_basic_block("k_done")
        builder.cbranch(builder.icmp_signed(">", k, const(0)), loop, done)

        builder.position_at_end(loop)
        kk = builder.phi(_I64)
        kk.add_incoming(const(0), entry)
        sums = [builder.phi(_VECTOR) for _ in range(ROWS * VECTORS)]
        for acc in sums:
            acc.add_incoming(zero, entry)
        at = builder.gep(base, [builder.load(builder.gep(offsets, [kk]))])
        loaded = [builder.load(vector_at(at, LANES * v), align=4) for v in range(VECTORS)]
        weights = builder.gep(w, [builder.add(w0, builder.mul(kk, const(ROWS)))])
        updated = []
        for r in range(ROWS):
            weight = _broadcast(builder, builder.load(builder.gep(weights, [const(r)])))
            updated += [builder.call(fmuladd, [weight, loaded[v], sums[r * VECTORS + v]]) for v in range(VECTORS)]
        next_k = builder.add(kk, const(1))
        kk.add_incoming(next_k, loop)
        for acc, new in zip(sums, updated, strict=True):
            acc.add_incoming(new, loop)
        builder.cbranch(builder.icmp_signed("<", next_k, k), loop, done)

        builder.position_at_end(done)
        results = [builder.phi(_VECTOR) for _ in range(ROWS * VECTORS)]
        for result, new in zip(results, updated, strict=True):
            result.add_incoming(zero, entry)
            result.add_incoming(new, loop)
        for r in range(ROWS):
            row = builder.gep(dst, [builder.add(d0, builder.mul(const(r), dstep))])
            for v in range(VECTORS):
                builder.store(results[r * VECTORS + v], vector_at(row, LANES * v), align=4)
        return context.get_dummy_value()

    @intrinsic
    def tile(typingctx, src, start, offsets, w, w0, k, dst, d0, dstep):
        return types.void(src, start, offsets, w, w0, k, dst, d0, dstep), codegen

    return tile


_TILE = _tile_intrinsic()


def pack(w: np.ndarray) -> np.ndarray:
    """[O, C, kh, kw] weights as [ceil(O / ROWS), C*kh*kw, ROWS] float32: per group of ``ROWS`` output
    channels, each (channel, tap)'s weights side by side (zero past O)."""
    o = w.shape[0]
    padded = np.zeros((-(-o // ROWS) * ROWS, w[0].size), np.float32)
    padded[:o] = w.reshape(o, -1)
    return np.ascontiguousarray(padded.reshape(-1, ROWS, padded.shape[1]).transpose(0, 2, 1))


@njit(cache=True, inline="always")
def _row(flat, start, offsets, packed, out, d0, plane, ow, o_ch, scratch):
    """One output row of every channel: tiles along it, the last (or a last group's) through scratch."""
    groups, k = packed.shape[0], packed.shape[1]
    weights = packed.reshape(packed.size)
    for x0 in range(0, ow, SPAN):
        pixels = min(SPAN, ow - x0)
        for g in range(groups):
            chans = min(ROWS, o_ch - g * ROWS)
            at = d0 + g * ROWS * plane + x0
            if pixels == SPAN and chans == ROWS:
                _TILE(flat, start + x0, offsets, weights, g * k * ROWS, k, out, at, plane)
            else:
                _TILE(flat, start + x0, offsets, weights, g * k * ROWS, k, scratch, 0, SPAN)
                for r in range(chans):
                    for q in range(pixels):
                        out[at + r * plane + q] = scratch[r * SPAN + q]


@parallel_kernel
def pixel_tiles(x, packed, o_ch, kh, kw, pt, pl, oh, ow, band_rows):
    """``out[n, o, y, q] = sum_{c,i,j} w[o, c, i, j] * x_padded[n, c, y + i, q + j]`` for NCHW float32
    ``x`` and ``packed = pack(w)`` (padding top ``pt`` / left ``pl``, zero elsewhere): bands of
    ``band_rows`` output rows dealt to ``PARTS`` tasks, round robin."""
    n, c, _, wd = x.shape
    k = packed.shape[1]
    wp = max(ow + kw - 1, pl + wd)
    rows_in = band_rows + kh - 1
    offsets = np.empty(k, dtype=np.int64)
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                offsets[(ci * kh + i) * kw + j] = (ci * rows_in + i) * wp + j
    bands = (oh + band_rows - 1) // band_rows
    out = np.empty((n, o_ch, oh, ow), dtype=np.float32)
    flat_out = out.reshape(out.size)
    plane = oh * ow
    size = c * rows_in * wp
    parts = min(PARTS, n * bands)
    for part in prange(parts):
        flat = np.zeros(size + SPAN, dtype=np.float32)  # a last tile's pixels past the band read here
        buf = flat[:size].reshape(c, rows_in, wp)
        scratch = np.empty(ROWS * SPAN, dtype=np.float32)
        for task in range(part, n * bands, parts):
            b, y0 = task // bands, (task % bands) * band_rows
            _fill(buf, x, b, y0 - pt, pl, wd)
            for y in range(min(band_rows, oh - y0)):
                d0 = b * o_ch * plane + (y0 + y) * ow
                _row(flat, y * wp, offsets, packed, flat_out, d0, plane, ow, o_ch, scratch)
    return out


def conv2d(x: np.ndarray, packed: np.ndarray, out_channels: int, kernel, pads, outs) -> np.ndarray:
    """NCHW float32 stride-1 convolution (one group, no dilation) by ``pixel_tiles``."""
    (kh, kw), (oh, ow) = kernel, outs
    wp = max(ow + kw - 1, pads[2] + x.shape[3])
    rows = max(MIN_BAND_ROWS, min(BAND_BYTES // max(1, 4 * x.shape[1] * wp) - kh + 1, -(-oh // MIN_BANDS)))
    parallel = x.shape[0] * out_channels * packed.shape[1] * oh * ow >= PARALLEL_MIN_MACS and parallel_allowed()
    x = np.ascontiguousarray(x)
    return pixel_tiles.run(parallel, x, packed, out_channels, kh, kw, pads[0], pads[2], oh, ow, rows)
