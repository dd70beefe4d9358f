"""Stride-1 float32 depthwise convolutions (3x3, 5x5, 7x7) as register tiles.

``conv.depthwise`` adds one row of taps at a time into an output plane in memory: per tap row a
load and a store of every output, and LLVM keeps the taps' products apart (no fused multiply-add),
so it runs at a third of the FMA units' speed (PP-LCNet's 5x5 over [128, 100, 76]: 1.5 ms on one
thread, onnxruntime's NCHWc kernel 0.2-1.0 ms). Here a tile of ``ROWS`` output rows x one or two
vectors keeps its sums in registers over all kh*kw taps (LLVM vector IR, a Numba intrinsic, as
``gemm``'s micro-kernel): each input vector is loaded once per tile and feeds every output row of
the tile whose taps reach it, with ``llvm.fmuladd``. The sums run in tap order (row by row), one
rounding per tap as a fused multiply-add gives.

A task pads one input plane into a zero-bordered buffer whose rows are a whole number of vectors
(plus the taps' reach) and whose row count is a whole number of tiles; the columns and rows past
the output are junk, computed into a scratch plane and not copied out.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import prange, types, uint64
from numba.core import cgutils
from numba.extending import intrinsic

from . import njit, parallel_kernel
from .gemm import LANES, _data

ROWS = 4
"""Output rows per tile: with two vectors, 8 accumulators, two loaded vectors and a broadcast fit
AVX2's 16 registers."""

KERNELS = (3, 5, 7)
"""Square kernel sizes with a tile kernel; others take ``conv.depthwise``."""

_PARTS = 64
"""Planes are dealt to at most this many tasks (each with its own buffers)."""

_F32 = ir.FloatType()
_I64 = ir.IntType(64)


def _tile_intrinsic(k: int, vectors: int):
    """``tile(src, s0, sstep, w, w0, dst, d0, dstep)``: for r < ROWS and lanes l < vectors*LANES,
    ``dst[d0 + r*dstep + l] = sum_{i, j < k} w[w0 + i*k + j] * src[s0 + (r + i)*sstep + j + l]``."""
    vec = ir.VectorType(_F32, LANES)
    splat = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)

    def codegen(context, builder, signature, args):
        src_, s0, sstep, w_, w0, dst_, d0, dstep = args
        src = _data(context, builder, signature.args[0], src_)
        w = _data(context, builder, signature.args[3], w_)
        dst = _data(context, builder, signature.args[5], dst_)
        fmuladd = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vec, [vec, vec, vec]), f"llvm.fmuladd.v{LANES}f32"
        )

        def at(base, offset, step, row, column):
            index = builder.add(builder.add(offset, builder.mul(ir.Constant(_I64, row), step)), ir.Constant(_I64, column))
            return builder.bitcast(builder.gep(base, [index]), vec.as_pointer())

        weights = []
        for t in range(k * k):
            scalar = builder.load(builder.gep(w, [builder.add(w0, ir.Constant(_I64, t))]))
            lane0 = builder.insert_element(ir.Constant(vec, ir.Undefined), scalar, ir.Constant(ir.IntType(32), 0))
            weights.append(builder.shuffle_vector(lane0, ir.Constant(vec, ir.Undefined), splat))
        sums = [[None] * vectors for _ in range(ROWS)]
        for row in range(ROWS + k - 1):
            for j in range(k):
                loaded = [builder.load(at(src, s0, sstep, row, j + LANES * v), align=4) for v in range(vectors)]
                for r in range(max(0, row - k + 1), min(ROWS, row + 1)):
                    weight = weights[(row - r) * k + j]
                    for v in range(vectors):
                        before = sums[r][v]
                        sums[r][v] = (
                            builder.fmul(weight, loaded[v])
                            if before is None
                            else builder.call(fmuladd, [weight, loaded[v], before])
                        )
        for r in range(ROWS):
            for v in range(vectors):
                builder.store(sums[r][v], at(dst, d0, dstep, r, LANES * v), align=4)
        return context.get_dummy_value()

    @intrinsic
    def tile(typingctx, src, s0, sstep, w, w0, dst, d0, dstep):
        return types.void(src, s0, sstep, w, w0, dst, d0, dstep), codegen

    return tile


_T3_2, _T3_1 = _tile_intrinsic(3, 2), _tile_intrinsic(3, 1)
_T5_2, _T5_1 = _tile_intrinsic(5, 2), _tile_intrinsic(5, 1)
_T7_2, _T7_1 = _tile_intrinsic(7, 2), _tile_intrinsic(7, 1)


def supported(x: np.ndarray, w_shape, stride, dil) -> bool:
    """Whether ``depthwise`` serves this convolution."""
    kh, kw = w_shape[2], w_shape[3]
    return x.dtype == np.float32 and kh == kw and kh in KERNELS and tuple(stride) == (1, 1) and tuple(dil) == (1, 1)


@njit(cache=True)
def _plane_tiles(plane, wp, w, w0, k, ext, wt, oh):
    """Every tile of one output plane (``ext``: rows of ``wt``) from its padded input ``plane``
    (rows of ``wp``): two-vector tiles across each band of rows, one vector for an odd last one."""
    pairs = wt // (2 * LANES) * 2 * LANES
    for y0 in range(0, oh, ROWS):
        s0, d0 = y0 * wp, y0 * wt
        for q in range(0, pairs, 2 * LANES):
            if k == 3:
                _T3_2(plane, s0 + q, wp, w, w0, ext, d0 + q, wt)
            elif k == 5:
                _T5_2(plane, s0 + q, wp, w, w0, ext, d0 + q, wt)
            else:
                _T7_2(plane, s0 + q, wp, w, w0, ext, d0 + q, wt)
        if pairs < wt:
            if k == 3:
                _T3_1(plane, s0 + pairs, wp, w, w0, ext, d0 + pairs, wt)
            elif k == 5:
                _T5_1(plane, s0 + pairs, wp, w, w0, ext, d0 + pairs, wt)
            else:
                _T7_1(plane, s0 + pairs, wp, w, w0, ext, d0 + pairs, wt)


@parallel_kernel
def depthwise(x, w, pt, pl, oh, ow):
    """``out[n, o] = sum_ij w[o, 0, i, j] * padded x[n, o // m][y + i, q + j]`` for [C*m, 1, k, k]
    float32 weights, stride and dilation 1 (see the module docstring)."""
    n, c, h, wd = x.shape
    o_ch, k = w.shape[0], w.shape[2]
    m = o_ch // c
    wt = -(-ow // LANES) * LANES
    wp = -(-(wt + k - 1) // LANES) * LANES
    bands = -(-oh // ROWS) * ROWS
    hp = bands + k - 1
    flat = w.reshape(o_ch * k * k)
    out = np.empty((n, o_ch, oh, ow), dtype=np.float32)
    tasks = n * c
    parts = min(tasks, _PARTS)
    for part in prange(parts):
        plane = np.zeros(hp * wp + LANES, dtype=np.float32)  # the zero border stays from task to task
        ext = np.empty(bands * wt, dtype=np.float32)
        for t in range(part * tasks // parts, (part + 1) * tasks // parts):
            b, ch = t // c, t % c
            for y in range(h):
                start = (y + pt) * wp + pl
                for q in range(wd):
                    plane[uint64(start + q)] = x[b, ch, y, uint64(q)]
            for o in range(ch * m, (ch + 1) * m):
                _plane_tiles(plane, wp, flat, o * k * k, k, ext, wt, oh)
                for y in range(oh):
                    for q in range(ow):
                        out[b, o, y, uint64(q)] = ext[uint64(y * wt + q)]
    return out
