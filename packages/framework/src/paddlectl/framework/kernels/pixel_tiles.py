"""Float32 convolutions (strides 1 and 2) as register tiles with the output pixels along the vector lanes.

``conv_tiles`` puts output channels in the lanes: a layer whose channels are not a whole number of
vectors wastes the rest (PP-OCRv4 det's 24-channel 3x3 layers fill 24 of 32 AVX-512 lanes) and its
pixel-major result needs a transpose to NCHW. Here a tile is a few output channels x a few vectors
of neighbouring pixels of one output row (``SHAPES``): per (input channel, tap) one unaligned load
of the input row per vector, one broadcast weight per channel and a fused multiply-add per
accumulator, the sums in registers over the whole reduction (as ``gemm``'s micro-kernel), stored
straight into the NCHW result. Every lane does useful work wherever the row and the channels are a
whole number of tiles; a tile past the row's end or the last channel computes into a scratch tile
and its part inside is copied. The input is read in place, as in ``conv_tiles``: each band of
output rows copies the input rows it reads into a zero-bordered buffer (the padding), at a column
stride of 2 split into two column phases so that a tile's pixels are neighbours, and a table holds
the taps' offsets in it.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic

from . import njit, parallel_allowed, parallel_kernel
from .conv_tiles import BAND_BYTES, PARTS, _fill
from .cores import free_cores
from .gemm import _VECTOR, LANES, _broadcast, _data, _fmuladd, _i64, _k_loop, _vector_ptr, copy_run

SHAPES = ((24, 1), (12, 2), (8, 3)) if LANES == 16 else ((12, 1), (6, 2), (4, 3))
"""Tiles of (channels, vectors of pixels): the accumulators, the loaded input vectors and a broadcast
fill the register file (AVX-512's 32 registers, else AVX2's 16). Each layer takes the shape that
computes the fewest padded outputs (pixels past the row's end, channels past the last), the middle
one on a tie: PP-OCRv4 rec's 48-pixel rows take 3 vectors."""

TILE_OUTPUTS = SHAPES[0][0] * SHAPES[0][1] * LANES
"""Outputs of every tile shape (the scratch tile's size)."""

MIN_BANDS = 8
MIN_BAND_ROWS = 4
"""An image is cut into bands of at most ``BAND_BYTES`` of input rows, and the batch into at least
``MIN_BANDS`` bands (of at least ``MIN_BAND_ROWS`` rows: a band reads ``kh - 1`` rows more than it
makes), so that two threads share a small image evenly; a batch of eight or more keeps its images
whole, so that a small image's rows fill whole tiles (LeNet's 6 -> 16 layer at batch 64 in 4-row
bands 0.39 ms, whole 0.25-0.40; its input gradient 0.62-0.75 against 0.45-0.56)."""

PARALLEL_MIN_MACS = 1 << 22
"""Layers from this many multiply-adds (~50 us on one core) run on every thread while no other
process keeps a core busy (``kernels.cores``; a region waits for its slowest thread, and each output
is one tile's sum, so the thread count never changes it): the parallel variant is chosen by work, not
by the input's size (a deep layer has a small input and much work). `train_step.py`'s LeNet step
beside a busy neighbour: 8.7-9.5 ms on both threads, 5.2-5.7 backing off (7.6-7.9 with columns)."""


def _tile_intrinsic(rows: int, vectors: int):
    """``tile(src, start, offsets, w, w0, k, dst, d0, dstep)``: for r < rows and lanes l < vectors*LANES,
    ``dst[d0 + r*dstep + l] = sum_kk w[w0 + kk*rows + r] * src[start + offsets[kk] + l]`` (weights
    packed for this tile height: ``pack(w, rows)``)."""

    def codegen(context, builder, signature, args):
        src_, start, offsets_, w_, w0, k, dst_, d0, dstep = args
        src = _data(context, builder, signature.args[0], src_)
        offsets = _data(context, builder, signature.args[2], offsets_)
        w = _data(context, builder, signature.args[3], w_)
        dst = _data(context, builder, signature.args[6], dst_)
        fmuladd = _fmuladd(builder)
        base = builder.gep(src, [start])

        def accumulate(kk, sums):
            at = builder.gep(base, [builder.load(builder.gep(offsets, [kk]))])
            loaded = [builder.load(_vector_ptr(builder, at, LANES * v), align=4) for v in range(vectors)]
            weights = builder.gep(w, [builder.add(w0, builder.mul(kk, _i64(rows)))])
            updated = []
            for r in range(rows):
                weight = _broadcast(builder, builder.load(builder.gep(weights, [_i64(r)])))
                updated += [builder.call(fmuladd, [weight, loaded[v], sums[r * vectors + v]]) for v in range(vectors)]
            return updated

        zero = ir.Constant(_VECTOR, [0.0] * LANES)
        results = _k_loop(builder, k, [zero] * (rows * vectors), accumulate)
        for r in range(rows):
            row = builder.gep(dst, [builder.add(d0, builder.mul(_i64(r), dstep))])
            for v in range(vectors):
                builder.store(results[r * vectors + v], _vector_ptr(builder, row, LANES * v), align=4)
        return context.get_dummy_value()

    @intrinsic
    def tile(typingctx, src, start, offsets, w, w0, k, dst, d0, dstep):
        return types.void(src, start, offsets, w, w0, k, dst, d0, dstep), codegen

    return tile


_T1, _T2, _T3 = (_tile_intrinsic(rows, vectors) for rows, vectors in SHAPES)
"""``_T{vectors}`` (module globals: what a cached Numba function may call)."""


def pack(w: np.ndarray, rows: int) -> np.ndarray:
    """[O, C, kh, kw] weights as [ceil(O / rows), C*kh*kw, rows] float32 for tiles of ``rows``
    channels: per tile's channels, each (channel, tap)'s weights side by side (zero past O), so that a
    tile reads whole cache lines of its own weights. Packed for the tallest tile, a shorter one read
    a third or a half of each line: ResNet-50's 512 -> 512 layer at 7x7 (8-channel tiles, 9.4 MB of
    weights from L3) then streamed three times its weights."""
    o = w.shape[0]
    padded = np.zeros((-(-o // rows) * rows, w[0].size), np.float32)
    padded[:o] = w.reshape(o, -1)
    return np.ascontiguousarray(padded.reshape(-1, rows, padded.shape[1]).transpose(0, 2, 1))


def padded_outputs(out_channels: int, width: int, vectors: int) -> int:
    """Outputs the tiles ``vectors`` wide compute for a row of ``width`` pixels of every channel."""
    rows, span = SHAPES[vectors - 1][0], vectors * LANES
    return -(-out_channels // rows) * rows * -(-width // span) * span


def least_padded(padded) -> int:
    """The tile shape (its vectors, 1-3) for which ``padded(vectors)`` is least, the middle one on a
    tie."""
    least = min(padded(vectors) for vectors in (1, 2, 3))
    return next(v for v in (2, 1, 3) if padded(v) == least)


def vectors_for(out_channels: int, width: int) -> int:
    """The tile shape (its vectors) with the fewest padded outputs for this layer (see ``SHAPES``),
    the middle one on a tie."""
    return least_padded(lambda vectors: padded_outputs(out_channels, width, vectors))


@njit(cache=True, inline="always")
def _tile(vectors, src, start, offsets, w, w0, k, dst, d0, dstep):
    if vectors == 2:
        _T2(src, start, offsets, w, w0, k, dst, d0, dstep)
    elif vectors == 1:
        _T1(src, start, offsets, w, w0, k, dst, d0, dstep)
    else:
        _T3(src, start, offsets, w, w0, k, dst, d0, dstep)


@njit(cache=True, inline="always")
def _row(vectors, rows, flat, start, offsets, packed, out, d0, plane, ow, o_ch, scratch):
    """One output row of every channel: tiles of ``rows`` channels x ``vectors`` vectors along it, the
    last (or a last channel group's) through scratch."""
    k = packed.shape[1]
    weights = packed.reshape(packed.size)
    span = vectors * LANES
    for x0 in range(0, ow, span):
        pixels = min(span, ow - x0)
        for c0 in range(0, o_ch, rows):
            chans = min(rows, o_ch - c0)
            w0 = c0 * k  # the tile's channels' weights: group c0 // rows of ``pack(w, rows)``
            at = d0 + c0 * plane + x0
            if pixels == span and chans == rows:
                _tile(vectors, flat, start + x0, offsets, weights, w0, k, out, at, plane)
            else:
                _tile(vectors, flat, start + x0, offsets, weights, w0, k, scratch, 0, span)
                for r in range(chans):
                    copy_run(out, at + r * plane, scratch, r * span, pixels)


@njit(cache=True, inline="always")
def _fill_pairs(buf, x, b, row0, pl, wd, step):
    """``_fill`` at a column stride of 2: padded column ``col`` of image row ``row0 + r*step`` goes to
    ``buf[ci, col % 2, r, col // 2]`` (the even and the odd columns as two planes), so that a tile's
    pixels, two columns apart in the image, are neighbours in their plane. The stride is a constant
    here, so the split vectorises (as shuffles of whole vectors)."""
    c, _, rows, wq = buf.shape
    h = x.shape[2]
    for ci in range(c):
        for r in range(rows):
            src = row0 + r * step
            if 0 <= src < h:
                line = x[b, ci, src]
                for e in range(2):
                    dst = buf[ci, e, r]
                    q0 = (e + pl) & 1  # the first image column of this phase
                    d0 = (pl + q0) >> 1
                    for t in range((wd - q0 + 1) >> 1):
                        dst[d0 + t] = line[q0 + 2 * t]
            else:
                for e in range(2):
                    for q in range(wq):
                        buf[ci, e, r, q] = 0.0


@njit(cache=True, inline="always")
def input_rows(band_rows, kh, sh, phases):
    """Input rows a band of ``band_rows`` output rows reads (per row phase plane where the rows are
    split into ``phases`` planes)."""
    return band_rows + (kh - 1) // sh if phases == 2 else (band_rows - 1) * sh + kh


@njit(cache=True, inline="always")
def tap_offsets(c, kh, kw, sw, phases, rows_in, wq):
    """Where each (channel, tap) of a band's tile reads its first pixel in the band's buffer
    (``fill_band``): ``sw`` column phase planes per row phase, ``rows_in`` rows of ``wq`` each."""
    offsets = np.empty(c * kh * kw, dtype=np.int64)
    for ci in range(c):
        for i in range(kh):
            for j in range(kw):
                plane_of = (ci * phases + i % phases) * sw + j % sw
                offsets[(ci * kh + i) * kw + j] = (plane_of * rows_in + i // phases) * wq + j // sw
    return offsets


@njit(cache=True, inline="always")
def fill_band(buf, x, b, row0, pl, sw, phases):
    """The padded input rows from ``row0`` of image ``b`` into ``buf`` [C, phases * sw, rows, wq]:
    at stride 1 as they are, at stride 2 as column phase planes, and each row phase's planes
    (input rows a, a + phases, ...) in turn."""
    wd = x.shape[3]
    if sw == 1:
        _fill(buf[:, 0], x, b, row0, pl, wd)
    else:
        for a in range(phases):
            _fill_pairs(buf[:, 2 * a : 2 * a + 2], x, b, row0 + a, pl, wd, phases)


@parallel_kernel
def pixel_tiles(x, packed, o_ch, kh, kw, sh, sw, pt, pl, oh, ow, wq, band_rows, vectors, joined):
    """``out[n, o, y, q] = sum_{c,i,j} w[o, c, i, j] * x_padded[n, c, y*sh + i, q*sw + j]`` for NCHW
    float32 ``x`` and ``packed = pack(w)`` (padding top ``pt`` / left ``pl``, zero elsewhere; strides 1
    or 2): bands of ``band_rows`` output rows dealt to ``PARTS`` tasks, round robin. A band's input
    rows are held as ``sw`` column phase planes of ``wq`` columns each (``plane_width``); ``joined``
    (strides 1 and (2, 2)) computes each band as one row (``_joined_band``): at stride 2 the rows are
    split into even and odd planes too, so that consecutive output rows read consecutive plane rows."""
    n, c = x.shape[:2]
    rows = SHAPES[vectors - 1][0]
    phases = sh if joined else 1  # row phase planes
    rows_in = input_rows(band_rows, kh, sh, phases)
    offsets = tap_offsets(c, kh, kw, sw, phases, rows_in, wq)
    bands = (oh + band_rows - 1) // band_rows
    out = np.empty((n, o_ch, oh, ow), dtype=np.float32)
    flat_out = out.reshape(out.size)
    plane = oh * ow
    size = c * phases * sw * rows_in * wq
    parts = min(PARTS, n * bands)
    for part in prange(parts):
        flat = np.zeros(size + TILE_OUTPUTS, dtype=np.float32)  # a last tile's pixels past the band read here
        buf = flat[:size].reshape(c, phases * sw, rows_in, wq)
        scratch = np.empty(TILE_OUTPUTS, dtype=np.float32)
        band_out = np.empty(o_ch * band_rows * wq if joined else 0, dtype=np.float32)
        for task in range(part, n * bands, parts):
            b, y0 = task // bands, (task % bands) * band_rows
            fill_band(buf, x, b, y0 * sh - pt, pl, sw, phases)
            rows_out = min(band_rows, oh - y0)
            if joined:
                _joined_band(vectors, rows, flat, offsets, packed, band_out, scratch, o_ch, rows_out * wq, wq, ow,
                             flat_out, b * o_ch * plane + y0 * ow, plane)  # fmt: skip
                continue
            for y in range(rows_out):
                d0 = b * o_ch * plane + (y0 + y) * ow
                _row(vectors, rows, flat, y * sh * wq, offsets, packed, flat_out, d0, plane, ow, o_ch, scratch)
    return out


@njit(cache=True, inline="always")
def _joined_band(vectors, rows, flat, offsets, packed, band_out, scratch, o_ch, length, wq, ow, out, d0, plane):
    """A band's output rows as one row of ``length`` = rows x ``wq`` pixels: tiles run across
    row ends (the ``wq - ow`` positions past each row are computed and dropped), so a narrow image
    (ResNet's 7x7 and 14x14 layers) fills the vector lanes. ``band_out`` holds the band per channel
    (``length`` apart); each output row is then copied to its place in NCHW ``out``."""
    _row(vectors, rows, flat, 0, offsets, packed, band_out, 0, length, length, o_ch, scratch)
    for o in range(o_ch):
        for y in range(length // wq):
            copy_run(out, d0 + o * plane + y * ow, band_out, o * length + y * wq, ow)


JOINED_WASTE = 1.06
"""A stride-1 layer whose rows leave more than 6% of the tiles' outputs padding (rows not a whole
number of tiles, channels not of tile heights) runs as joined bands (``_joined_band``), whose copy
into place costs a few percent. Measured on two threads (ms, row by row against joined): ResNet's
64 -> 64 at 56x56 1.06 vs 0.89, 256 -> 256 at 14x14 1.17 vs 1.02, 512 -> 512 at 7x7 2.35 vs 0.99,
DenseNet's 128 -> 32 at 56x56 1.13 vs 0.96 and at 14x14 0.115 vs 0.092; rows that are whole tiles
lose: 16 -> 16 at 160x320 (5% padding) 1.05 vs 1.18, PP-OCRv4 det's 96 -> 24 at 80x160 2.20 vs 2.32."""


NARROW_WIDTH = 24
"""Rows narrower than this leave a tile's lanes idle (``conv_select.PIXELS_MIN_WIDTH`` is this
value): at stride (2, 2) such rows run joined, and only they (each row then reads one column more
than it makes: ``plane_width``); wider ones lose (ms, two threads, joined vs row by row: ResNet's
128 -> 128 from 56x56 1.35 vs 1.29; from 28x28 256 -> 256 1.38 vs 1.44, from 14x14 512 -> 512 1.13
vs 2.36)."""


def rows_fitting(channels: int, sw: int, wq: int, kh: int, sh: int) -> int:
    """Output rows whose band of input rows (``channels`` x ``sw`` phase planes of ``wq`` columns)
    fits ``BAND_BYTES``."""
    return (BAND_BYTES // max(1, 4 * channels * sw * wq) - kh) // sh + 1


def plane_width(width: int, kw: int, sw: int, pl: int, ow: int, joined: bool = False) -> int:
    """Columns of a band's phase plane: every tap of every output, and the left-padded image row.
    ``joined`` rows (stride 1, read as one row) may let a row's last taps read the next row's left
    padding, so that the zero columns between two rows are shared."""
    taps = ow + kw - 1 - (pl if joined else 0) if sw == 1 else ow + (kw - 1) // sw
    return max(taps, -(-(pl + width) // sw))


def conv2d(x: np.ndarray, panels, out_channels: int, kernel, stride, pads, outs) -> np.ndarray:
    """NCHW float32 convolution (one group, no dilation, strides 1 or 2) by ``pixel_tiles``;
    ``panels(rows)`` gives the weight packed for tiles of that height (``pack``)."""
    (kh, kw), (sh, sw), (oh, ow) = kernel, stride, outs
    wq = plane_width(x.shape[3], kw, sw, pads[2], ow)
    per_image = -(-MIN_BANDS // x.shape[0])  # bands an image needs for MIN_BANDS in the batch
    rows = max(MIN_BAND_ROWS, min(rows_fitting(x.shape[1], sw, wq, kh, sh), -(-oh // per_image)))
    x = np.ascontiguousarray(x)
    vectors = vectors_for(out_channels, ow)
    padding = padded_outputs(out_channels, ow, vectors) > JOINED_WASTE * out_channels * ow
    joined = ((sh, sw) == (1, 1) and padding) or ((sh, sw) == (2, 2) and ow < NARROW_WIDTH)
    if joined:
        wq = plane_width(x.shape[3], kw, sw, pads[2], ow, joined=sw == 1)
        vectors = vectors_for(out_channels, min(rows, oh) * wq)
    packed = panels(SHAPES[vectors - 1][0])
    k = kh * kw * x.shape[1]
    macs = x.shape[0] * out_channels * k * oh * ow
    parallel = macs >= PARALLEL_MIN_MACS and parallel_allowed() and free_cores() > 1
    return pixel_tiles.run(
        parallel, x, packed, out_channels, kh, kw, sh, sw, pads[0], pads[2], oh, ow, wq, rows, vectors, joined
    )
