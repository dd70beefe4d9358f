"""Float32 GEMM against a packed constant weight: a register-tiled micro-kernel written as LLVM
vector IR (a Numba intrinsic), for the ``fc`` op of inference programs.

Why not OpenBLAS: at batch 1 a transformer's products have few rows (one per token), and OpenBLAS
packs the weight on every call, which those rows do not amortise. Measured on one thread here
(Zen 5, AVX-512), [64, K] x [K, N] products: 256x1024 147 against 227 GFLOP/s, 256x768 175
against 217, 1024x256 161 against 205, 256x256 157 against 194 (NumPy's 1024^3 peak: 222).
A loaded model's weights never change, so ``pack`` lays each out once in panels of ``NR`` columns,
k-major, each panel's bias in its first row. The micro-kernel keeps an ``MR`` x ``NR`` block of the
result in vector registers over the whole K loop: per k, ``NR / LANES`` vector loads of the panel
row, ``MR`` broadcasts of the input and ``MR * NR / LANES`` fused multiply-adds. The tile fills
the register file (AVX-512: 24 accumulators of 32 registers; 7x64 spilled and ran at half speed).
Plain Numba loops did not get there: LLVM kept the accumulators in memory (9-53 GFLOP/s).
On more threads ``fc`` splits row blocks and panels into tasks (``split``): on a 2-core Xeon
(Sapphire Rapids) MiniLM's [128, 384] x [384, 1536] ran at 275 GFLOP/s against OpenBLAS's 254.
"""

from __future__ import annotations

import glob
import math

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.core import config as numba_config
from numba.extending import intrinsic

from . import fastmath, njit, parallel_kernel


def _lanes() -> int:
    """Float32 lanes of the widest vector the Numba target has (the features Numba compiles for)."""
    features = numba_config.CPU_FEATURES
    features = set((features if features is not None else llvm.get_host_cpu_features().flatten()).split(","))
    if "+avx512f" in features:
        return 16
    return 8 if "+avx2" in features and "+fma" in features else 4


LANES = _lanes()
VECTORS = 4 if LANES == 16 else 2
"""Vectors per panel row: the tile's accumulators (MR x VECTORS) plus a panel row and a broadcast
fit the register file (32 registers with AVX-512, 16 with AVX2/SSE)."""
NR = LANES * VECTORS
"""Columns per packed panel."""
MR = 6
"""Rows per micro-kernel tile."""


_SIZE_UNITS = {"K": 1 << 10, "M": 1 << 20}


def _l2_bytes(cpu: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The first core's L2 cache size from sysfs ("2048K"; 512 KiB where it cannot be read)."""
    for index in sorted(glob.glob(f"{cpu}/index*")):
        try:
            with open(f"{index}/level") as level, open(f"{index}/size") as size:
                if level.read().strip() == "2":
                    text = size.read().strip()
                    return int(text.rstrip("KM")) * _SIZE_UNITS.get(text[-1:], 1)
        except (OSError, ValueError):
            break
    return 512 << 10


ROW_BLOCK_BYTES = _l2_bytes() // 2
"""Input bytes taken at a time, so that a block stays in L2 while every panel passes it (half the
L2: on a 2 MiB-L2 Xeon 1 MiB blocks ran MiniLM's [4096, 1536] x [1536, 384] at 335 GFLOP/s on two
threads against 305 for 256 KiB, and its [128, 1536] rows as one block, split by panels, 271 vs 219)."""

_F32 = ir.FloatType()
_I64 = ir.IntType(64)


def pack(weight: np.ndarray, bias: np.ndarray | None = None, width: int = NR) -> np.ndarray:
    """``weight`` [K, N] (and ``bias`` [N]) as [ceil(N / width), K + 1, width] float32: panel p holds
    columns p*width.. of the bias (row 0) and the weight (rows 1..K), zero-padded past N."""
    k, n = weight.shape
    padded = np.zeros((k + 1, -(-n // width) * width), np.float32)
    padded[1:, :n] = weight
    if bias is not None:
        padded[0, :n] = bias
    return np.ascontiguousarray(padded.reshape(k + 1, -1, width).transpose(1, 0, 2))


def _data(context, builder, array_type, array):
    return cgutils.create_struct_proxy(array_type)(context, builder, value=array).data


_VECTOR = ir.VectorType(_F32, LANES)


def _fmuladd(builder):
    """LLVM's ``fmuladd`` over vectors of LANES floats (a fused multiply-add where the CPU has one)."""
    return cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_VECTOR, [_VECTOR] * 3), f"llvm.fmuladd.v{LANES}f32"
    )


def _i64(value: int):
    return ir.Constant(_I64, value)


def _vector_ptr(builder, base, offset):
    """A pointer to the vector of LANES floats at element ``offset`` (an int or an IR value) of ``base``."""
    offset = _i64(offset) if isinstance(offset, int) else offset
    return builder.bitcast(builder.gep(base, [offset]), _VECTOR.as_pointer())


def _k_loop(builder, k, initial, step):
    """``for kk in range(k): sums = step(kk, sums)`` over vector accumulators starting at ``initial``,
    as a loop whose accumulators are phis (LLVM keeps them in registers); the final sums (``initial``
    where ``k <= 0``)."""
    entry = builder.block
    loop, done = builder.append_basic_block("k_loop"), builder.append_basic_block("k_done")
    builder.cbranch(builder.icmp_signed(">", k, _i64(0)), loop, done)
    builder.position_at_end(loop)
    kk = builder.phi(_I64)
    kk.add_incoming(_i64(0), entry)
    sums = [builder.phi(_VECTOR) for _ in initial]
    for acc, start in zip(sums, initial, strict=True):
        acc.add_incoming(start, entry)
    updated = step(kk, sums)
    tail = builder.block  # ``loop`` itself unless the step holds a loop of its own
    next_k = builder.add(kk, _i64(1))
    kk.add_incoming(next_k, tail)
    for acc, new in zip(sums, updated, strict=True):
        acc.add_incoming(new, tail)
    builder.cbranch(builder.icmp_signed("<", next_k, k), loop, done)
    builder.position_at_end(done)
    results = [builder.phi(_VECTOR) for _ in initial]
    for result, start, new in zip(results, initial, updated, strict=True):
        result.add_incoming(start, entry)
        result.add_incoming(new, tail)
    return results


def _first_lanes(builder, count):
    """The mask of a vector's first ``count`` (an i64 IR value in 0..LANES) lanes."""
    lanes = ir.Constant(ir.VectorType(_I64, LANES), list(range(LANES)))
    splat = builder.insert_element(ir.Constant(ir.VectorType(_I64, LANES), ir.Undefined), count, _i64(0))
    splat = builder.shuffle_vector(splat, splat, ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES))
    return builder.icmp_signed("<", lanes, splat)


_MASK = ir.VectorType(ir.IntType(1), LANES)
_ALIGN = ir.Constant(ir.IntType(32), 4)


def _store_first(builder, vector, pointer, count):
    """Store the first ``count`` (an i64 IR value in 0..LANES) lanes of ``vector`` at ``pointer``: a
    masked store, so a tile at a row's end writes in place instead of through a scratch copy."""
    store = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(ir.VoidType(), [_VECTOR, _VECTOR.as_pointer(), ir.IntType(32), _MASK]),
        f"llvm.masked.store.v{LANES}f32.p0",
    )
    builder.call(store, [vector, pointer, _ALIGN, _first_lanes(builder, count)])


def _load_first(builder, pointer, count):
    """The first ``count`` lanes of the vector at ``pointer``, zeros after: a masked load, which
    touches no memory past them."""
    load = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(_VECTOR, [_VECTOR.as_pointer(), ir.IntType(32), _MASK, _VECTOR]),
        f"llvm.masked.load.v{LANES}f32.p0",
    )
    return builder.call(load, [pointer, _ALIGN, _first_lanes(builder, count), ir.Constant(_VECTOR, [0.0] * LANES)])


@intrinsic
def copy_run(typingctx, dst, d0, src, s0, n):
    """``dst.flat[d0:d0 + n] = src.flat[s0:s0 + n]`` for float32 arrays contiguous over those runs, a
    vector at a time (the last one masked). Numba's element loop checks every index for wraparound
    and stays scalar (~1.2 ns an element on runs of 10-40; LeNet's 6 -> 16 layer spent a third of
    its time in such copies), and a jitted helper taking the arrays would count references on every
    call."""

    def codegen(context, builder, signature, args):
        dst_, d0_, src_, s0_, n_ = args
        source = builder.gep(_data(context, builder, signature.args[2], src_), [s0_])
        target = builder.gep(_data(context, builder, signature.args[0], dst_), [d0_])
        lanes = _i64(LANES)

        def chunk(kk, sums):
            at = builder.mul(kk, lanes)
            left = builder.sub(n_, at)
            count = builder.select(builder.icmp_signed("<", left, lanes), left, lanes)
            vector = _load_first(builder, _vector_ptr(builder, source, at), count)
            _store_first(builder, vector, _vector_ptr(builder, target, at), count)
            return sums

        _k_loop(builder, builder.sdiv(builder.add(n_, _i64(LANES - 1)), lanes), [], chunk)
        return context.get_dummy_value()

    return types.void(dst, types.int64, src, types.int64, types.int64), codegen


def _prefetch_l2(builder, pointer):
    """Ask for the cache line at ``pointer`` to come into L2 (``prefetcht1``): a hint, never a fault,
    so a pointer past the array's end is harmless."""
    hint = cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer()] + [ir.IntType(32)] * 3),
        "llvm.prefetch.p0i8",
    )
    read, level, data = (ir.Constant(ir.IntType(32), v) for v in (0, 2, 1))
    builder.call(hint, [builder.bitcast(pointer, ir.IntType(8).as_pointer()), read, level, data])


def _broadcast(builder, scalar):
    """``scalar`` in every lane of a vector."""
    lane0 = builder.insert_element(ir.Constant(_VECTOR, ir.Undefined), scalar, ir.Constant(ir.IntType(32), 0))
    splat = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)
    return builder.shuffle_vector(lane0, ir.Constant(_VECTOR, ir.Undefined), splat)


def _tile_intrinsic(
    vectors: int,
    height: int = MR,
    indexed: bool = False,
    stride: int = NR,
    step: int | None = None,
    ahead: bool = False,
):
    """``tile(a, start, step, rows, [offsets,] packed, panel, k, c, ldc, crow0, col0, relu)``:
        ``c[crow0 + r, col0:col0 + vectors*LANES] = act(bias + sum_kk A[r, kk] * weight[kk])`` for r < rows
        <= height, where ``A[r, kk]`` is ``a.flat[start + r*step + kk]`` (a row-major matrix: start =
        row0*lda, step = lda) or, ``indexed``, ``a.flat[start + r*step + offsets[kk]]`` (a convolution read
        in place: ``offsets`` the taps' element offsets in the image, ``step`` the stride between
        neighbouring output pixels). The panel's bias and weight are read from the flat packed array at
        ``panel`` (its element offset), ``stride`` floats a row (a narrower last panel of ``pack``'s keeps
    ``NR``). Rows past ``rows`` repeat
        the last row's loads and are not stored, so one kernel serves every row count. A fixed ``step``
        (a convolution's stride) replaces the argument and every row is read, past ``rows`` too (the
        caller leaves room): each row's load is then one base register plus a constant, not a pointer
        of its own (more rows than free integer registers spill). ``ahead`` also asks, per k, for the
        same row of the next panel (``k + 1`` rows on) to come into L2: see ``_panel``."""
    vec = _VECTOR

    def codegen(context, builder, signature, args):
        if indexed:
            a_, start_, step_, rows_, offsets_, packed_, panel_, k_, c_, ldc_, crow0_, col0_, relu_ = args
            at, ot, pt, ct = (signature.args[i] for i in (0, 4, 5, 8))
            o_ptr = _data(context, builder, ot, offsets_)
        else:
            a_, start_, step_, rows_, packed_, panel_, k_, c_, ldc_, crow0_, col0_, relu_ = args
            at, pt, ct = (signature.args[i] for i in (0, 4, 7))
        a_ptr, p_ptr = _data(context, builder, at, a_), _data(context, builder, pt, packed_)
        c_ptr = _data(context, builder, ct, c_)
        fmuladd = _fmuladd(builder)
        const = _i64

        def vectors_at(offset):
            """The tile's width of packed floats from element ``offset``: one panel row."""
            base = builder.gep(p_ptr, [offset])
            return [builder.load(_vector_ptr(builder, base, LANES * v), align=4) for v in range(vectors)]

        last = builder.sub(rows_, const(1))
        if step is None:
            row_ptrs = [
                builder.gep(a_ptr, [builder.add(start_, builder.mul(builder.select(
                    builder.icmp_signed("<", const(r), rows_), const(r), last), step_))])
                for r in range(height)
            ]  # fmt: skip
        else:  # every row read (the caller leaves room past the last): one base and constant offsets
            row_ptrs = [builder.gep(a_ptr, [builder.add(start_, const(r * step))]) for r in range(height)]
        bias = vectors_at(panel_)

        next_panel = builder.mul(builder.add(k_, const(1)), const(stride)) if ahead else None

        def accumulate(kk, accs):
            row = builder.add(panel_, builder.mul(builder.add(kk, const(1)), const(stride)))
            weights = vectors_at(row)
            if ahead:
                following = builder.gep(p_ptr, [builder.add(row, next_panel)])
                for v in range(vectors):
                    _prefetch_l2(builder, builder.gep(following, [const(LANES * v)]))
            element = builder.load(builder.gep(o_ptr, [kk])) if indexed else kk
            updated = []
            for r in range(height):
                a_rk = _broadcast(builder, builder.load(builder.gep(row_ptrs[r], [element])))
                updated += [builder.call(fmuladd, [a_rk, w, accs[r * vectors + v]]) for v, w in enumerate(weights)]
            return updated

        results = _k_loop(builder, k_, [bias[i % vectors] for i in range(height * vectors)], accumulate)
        zero = ir.Constant(vec, [0.0] * LANES)
        for r in range(height):
            with builder.if_then(builder.icmp_signed("<", const(r), rows_)):
                out = builder.gep(c_ptr, [builder.add(builder.mul(builder.add(crow0_, const(r)), ldc_), col0_)])
                for v in range(vectors):
                    result = results[r * vectors + v]
                    kept = builder.fcmp_unordered(">", result, zero)  # NaN kept, as the relu op does
                    activated = builder.select(relu_, builder.select(kept, result, zero), result)
                    builder.store(activated, _vector_ptr(builder, out, LANES * v), align=4)
        return context.get_dummy_value()

    if indexed:

        @intrinsic
        def tile(typingctx, a, start, step, rows, offsets, packed, panel, k, c, ldc, crow0, col0, relu):
            return types.void(a, start, step, rows, offsets, packed, panel, k, c, ldc, crow0, col0, relu), codegen

        return tile

    @intrinsic
    def tile(typingctx, a, start, step, rows, packed, panel, k, c, ldc, crow0, col0, relu):
        return types.void(a, start, step, rows, packed, panel, k, c, ldc, crow0, col0, relu), codegen

    return tile


_TILE = _tile_intrinsic(VECTORS)
_TILE_1, _TILE_2, _TILE_3 = (_tile_intrinsic(v) for v in (1, 2, 3))  # a last, narrower panel
_TILE_AHEAD = _tile_intrinsic(VECTORS, ahead=True)
_ROW = _tile_intrinsic(VECTORS, 1)
"""One row (a batch-1 dense layer): the full tile would do MR times its multiply-adds."""


@njit(cache=True)
def _panel(a, packed, n, relu, out, p, r0, r1, ahead=False):
    """Rows r0..r1 of panel ``p``'s columns; the last, partial panel through a scratch tile. With
    ``ahead`` the first row tile also brings the next panel into L2: a model's weights come from L3 or
    memory on every run (MiniLM's 42 MB), and each panel's first tile otherwise waits for its own
    (MiniLM's 24 products with rotating weights 10.6 -> 10.1 ms on two threads, and at 64 rows 10.6
    -> 9.6 ms on one; batch 32 and a small model whose weights stay in cache unchanged). Bursts of
    prefetches before a panel were slower."""
    k = a.shape[1]
    lda, start, full = a.strides[0] // 4, p * (k + 1) * NR, n // NR
    if p < full:
        for i0 in range(r0, r1, MR):
            if r1 - i0 == 1:
                _ROW(a, i0 * lda, lda, 1, packed, start, k, out, n, i0, p * NR, relu)
            elif ahead and i0 == r0:
                _TILE_AHEAD(a, i0 * lda, lda, min(MR, r1 - i0), packed, start, k, out, n, i0, p * NR, relu)
            else:
                _TILE(a, i0 * lda, lda, min(MR, r1 - i0), packed, start, k, out, n, i0, p * NR, relu)
        return
    rest = n - full * NR
    vectors = -(-rest // LANES)
    scratch = np.empty((MR, NR), np.float32)  # the columns past n have nowhere to go
    for i0 in range(r0, r1, MR):
        rows = min(MR, r1 - i0)
        if rows == 1:
            _ROW(a, i0 * lda, lda, 1, packed, start, k, scratch, NR, 0, 0, relu)
        elif vectors == 1:
            _TILE_1(a, i0 * lda, lda, rows, packed, start, k, scratch, NR, 0, 0, relu)
        elif vectors == 2:
            _TILE_2(a, i0 * lda, lda, rows, packed, start, k, scratch, NR, 0, 0, relu)
        elif vectors == 3:
            _TILE_3(a, i0 * lda, lda, rows, packed, start, k, scratch, NR, 0, 0, relu)
        else:
            _TILE(a, i0 * lda, lda, rows, packed, start, k, scratch, NR, 0, 0, relu)
        for r in range(rows):  # element loops: a 2-D slice copy costs Numba seconds to compile
            for j in range(rest):
                out[i0 + r, full * NR + j] = scratch[r, j]


@njit(cache=True)
def product(a, packed, out, r0, r1):
    """``out = a @ weight + bias`` for rows r0..r1 on one thread, every panel: for kernels that run
    products inside their own loops (``kernels.rnn``'s time steps)."""
    for p in range(packed.shape[0]):
        _panel(a, packed, out.shape[1], False, out, p, r0, r1)


RELU, GELU = 1, 2
"""``fc``'s activation codes (0: none): relu inside the tile's store, gelu over each panel's block
while it is in L1."""

_GELU_SCALE = np.float32(1.0 / math.sqrt(2.0))


@njit(cache=True, error_model="numpy")
def _gelu_block(out, r0, r1, c0, c1):
    """Exact (erf) gelu in place over out[r0:r1, c0:c1], as the ``gelu`` op computes it. A row slice
    indexed from 0 and NumPy's error model let the loop vectorise (``out[r, c]`` from ``c0``, whose
    sign LLVM cannot prove, or Python's zero check on erf's division: 7x slower)."""
    for r in range(r0, r1):
        row = out[r, c0:c1]
        for j in range(row.size):
            x = row[j]
            row[j] = np.float32(0.5) * x * (np.float32(1.0) + fastmath.erf(x * _GELU_SCALE))


@parallel_kernel
def fc(a, packed, n, act, out, block, chunks):
    """``out = act(a @ weight + bias)`` for ``a`` [M, K] with unit column stride, ``packed`` from
    :func:`pack` and ``out`` [M, n] contiguous, in tasks from :func:`split`: a task is one block of
    input rows (which stays in L2 while its panels pass it) times one of ``chunks`` shares of the
    panels. Each output is one tile's sum whichever task computes it: the split never changes it."""
    m = a.shape[0]
    panels = packed.shape[0]
    share = -(-panels // chunks)
    for t in prange(-(-m // block) * chunks):
        r0, p0 = t // chunks * block, t % chunks * share
        r1 = min(m, r0 + block)
        for p in range(p0, min(panels, p0 + share)):
            _panel(a, packed, n, act == RELU, out, p, r0, r1, p + 1 < min(panels, p0 + share))
            if act == GELU:
                _gelu_block(out, r0, r1, p * NR, min(n, (p + 1) * NR))


def split(m: int, k: int, threads: int) -> tuple[int, int]:
    """``fc``'s row block (at most ``ROW_BLOCK_BYTES`` of input, the blocks of equal size) and the
    panel shares per block that make the tasks a multiple of ``threads``."""
    most = max(MR, ROW_BLOCK_BYTES // max(4 * k, 1) // MR * MR)
    blocks = max(1, -(-m // most))
    block = max(1, -(-m // blocks))  # equal blocks: 128 rows as 4 x 32, not 3 x 42 + 2
    return block, threads // math.gcd(-(-m // block), threads)
