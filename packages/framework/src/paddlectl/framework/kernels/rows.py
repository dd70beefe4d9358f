"""Row helpers the softmax, cross-entropy and CTC kernels share (inlined into each)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba.extending import intrinsic

from . import njit

_VECTOR_BYTES = 32
"""Running maxima ``row_max`` keeps: one 256-bit vector (8 float32, 4 float64), the width Numba's
own loops use on AVX-512 CPUs too (LLVM prefers 256 bits there). Mixed with them, 512-bit maxima
made the softmax passes after the max 60% slower (1536 rows of 128: 194 against 121 us)."""


@intrinsic
def _lane_max(typingctx, row):
    """The largest entry in the whole vectors at the start of a unit-stride 1-D row (-inf if none;
    NaN entries skipped): one running maximum per lane, in an LLVM vector, combined at the end.
    LLVM vectorises neither a single ``v if v > m else m`` chain (that needs fast-math's no-NaN flag)
    nor, behind Numba's negative-index checks, an unrolled one (1536 rows of 128: 33 -> 10 us)."""
    dtype = row.dtype
    width = _VECTOR_BYTES * 8 // dtype.bitwidth

    def codegen(context, builder, signature, args):
        array = context.make_array(row)(context, builder, args[0])
        scalar = context.get_data_type(dtype)
        vector = ir.VectorType(scalar, width)
        i64 = ir.IntType(64)
        lowest = ir.Constant(scalar, float("-inf"))
        start = ir.Constant(vector, [lowest.constant] * width)
        blocks = builder.sdiv(builder.extract_value(array.shape, 0), ir.Constant(i64, width))
        entry = builder.block
        loop, done = builder.append_basic_block("lane_max"), builder.append_basic_block("lane_max_done")
        builder.cbranch(builder.icmp_signed(">", blocks, ir.Constant(i64, 0)), loop, done)
        builder.position_at_end(loop)  # the index and the maxima as phis: LLVM keeps them in registers
        index, best = builder.phi(i64), builder.phi(vector)
        at = builder.gep(array.data, [builder.mul(index, ir.Constant(i64, width))])
        value = builder.load(builder.bitcast(at, vector.as_pointer()), align=context.get_abi_sizeof(scalar))
        kept = builder.select(builder.fcmp_ordered(">", value, best), value, best)
        following = builder.add(index, ir.Constant(i64, 1))
        index.add_incoming(ir.Constant(i64, 0), entry)
        index.add_incoming(following, loop)
        best.add_incoming(start, entry)
        best.add_incoming(kept, loop)
        builder.cbranch(builder.icmp_signed("<", following, blocks), loop, done)
        builder.position_at_end(done)
        lanes = builder.phi(vector)
        lanes.add_incoming(start, entry)
        lanes.add_incoming(kept, loop)
        m = lowest
        for lane in range(width):
            v = builder.extract_element(lanes, ir.Constant(ir.IntType(32), lane))
            m = builder.select(builder.fcmp_ordered(">", v, m), v, m)
        return m

    return dtype(row), codegen


@njit(cache=True, inline="always")
def row_max(xr):
    """The largest entry of a 1-D row (-inf for an empty one; NaN entries skipped), in the row's
    dtype: whole vectors through ``_lane_max`` where the row has unit stride, the rest one by one."""
    n = xr.size
    m = xr.dtype.type(-np.inf)
    start = 0
    if xr.strides[0] == xr.itemsize:
        m = _lane_max(xr)
        start = n - n % (_VECTOR_BYTES // xr.itemsize)
    for q in range(start, n):
        v = xr[q]
        m = v if v > m else m
    return m
