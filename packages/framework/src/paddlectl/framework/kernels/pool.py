"""Window pooling over [planes, H, W] arrays, and the nearest-neighbour gather resizing uses;
each plane (image x channel) is one parallel task.

Windows are given per output row/column as clipped ``[start, end)`` bounds, so the same kernels
serve fixed-size pooling (with padding and ceil mode) and adaptive pooling.
"""

import numpy as np
from numba import prange, uint64

from . import njit, parallel_kernel
from .fastmath import REASSOC

# NumPy twins of the forward kernels (``kernels.background``: what runs while a kernel compiles),
# the same windows and the same first-maximum rule, one array pass per window offset.


def _window_max(x, hs, he, ws, we):
    """``max_pool`` in NumPy: window offsets in the kernel's order, a later value taken only when greater."""
    w = x.shape[2]
    out = arg = None
    for dy in range(int(np.max(he - hs))):
        rows = np.minimum(hs + dy, x.shape[1] - 1)
        for dz in range(int(np.max(we - ws))):
            cols = np.minimum(ws + dz, w - 1)
            v, at = x[:, rows[:, None], cols[None, :]], rows[:, None] * w + cols[None, :]
            if out is None:
                out, arg = v, np.broadcast_to(at, v.shape)
                continue
            take = ((hs + dy < he)[:, None] & (ws + dz < we)[None, :]) & (v > out)
            out, arg = np.where(take, v, out), np.where(take, at, arg)
    return out, arg.astype(np.int32)


def _max_2x2(x, oh, ow):
    return _window_max(x, 2 * np.arange(oh), 2 * np.arange(oh) + 2, 2 * np.arange(ow), 2 * np.arange(ow) + 2)


def _max_values(x, oh, ow, kh, kw, sh, sw, pt, pl):
    """``max_pool_values`` in NumPy: rows clipped to the image, columns padded with -inf."""
    h, w = x.shape[1:]
    rows = np.arange(oh) * sh - pt
    cols = np.arange(ow) * sw - pl
    hs, he = np.clip(rows, 0, h - 1), np.minimum(rows + kh, h)
    padded = np.pad(x, ((0, 0), (0, 0), (pl, max(0, (ow - 1) * sw + kw - pl - w))), constant_values=-np.inf)
    return _window_max(padded, hs, np.maximum(he, hs + 1), cols + pl, cols + pl + kw)[0]


def _max_2x2_same(x):
    below = np.concatenate([x[:, 1:], x[:, -1:]], axis=1)
    row = np.where(below > x, below, x)
    out = row.copy()
    out[:, :, :-1] = np.where(row[:, :, 1:] > row[:, :, :-1], row[:, :, 1:], row[:, :, :-1])
    return out


def _window_mean(x, hs, he, ws, we, divisor):
    """``avg_pool`` in NumPy: window sums from float64 prefix sums, divided as the kernel does."""
    sums = np.zeros((x.shape[0], x.shape[1] + 1, x.shape[2] + 1))
    sums[:, 1:, 1:] = x.cumsum(1, dtype=np.float64).cumsum(2)
    total = sums[:, he][:, :, we] - sums[:, hs][:, :, we] - sums[:, he][:, :, ws] + sums[:, hs][:, :, ws]
    return (total / divisor).astype(x.dtype)


def _gather(x, rows, cols):
    return x[:, rows[:, None], cols[None, :]]


@parallel_kernel(reference=_window_max)
def max_pool(x, hs, he, ws, we):
    """Max over each window and the flat ``h * W + w`` index of the first maximum (Paddle's mask)."""
    p, h, w = x.shape
    oh, ow = hs.size, ws.size
    out = np.empty((p, oh, ow), dtype=x.dtype)
    mask = np.empty((p, oh, ow), dtype=np.int32)
    for c in prange(p):
        for i in range(oh):
            for j in range(ow):
                best = x[c, hs[i], ws[j]]
                arg = hs[i] * w + ws[j]
                for y in range(hs[i], he[i]):
                    for z in range(ws[j], we[j]):
                        v = x[c, y, z]
                        take = v > best  # selects, not branches: random data mispredicts (2x)
                        best = v if take else best
                        arg = y * w + z if take else arg
                out[c, i, j] = best
                mask[c, i, j] = arg
    return out, mask


@parallel_kernel(reference=_max_2x2)
def max_pool_2x2(x, oh, ow):
    """``max_pool`` for the common 2x2, stride-2 windows without padding: four loads and three
    compares per output instead of a window loop (same first-maximum rule for the mask)."""
    p, _, w = x.shape
    out = np.empty((p, oh, ow), dtype=x.dtype)
    mask = np.empty((p, oh, ow), dtype=np.int32)
    for c in prange(p):
        for i in range(oh):
            for j in range(ow):
                k = 2 * i * w + 2 * j
                best = x[c, 2 * i, 2 * j]
                v = x[c, 2 * i, 2 * j + 1]
                if v > best:
                    best, k = v, 2 * i * w + 2 * j + 1
                v = x[c, 2 * i + 1, 2 * j]
                if v > best:
                    best, k = v, (2 * i + 1) * w + 2 * j
                v = x[c, 2 * i + 1, 2 * j + 1]
                if v > best:
                    best, k = v, (2 * i + 1) * w + 2 * j + 1
                out[c, i, j] = best
                mask[c, i, j] = k
    return out, mask


@parallel_kernel(reference=_max_values)
def max_pool_values(x, oh, ow, kh, kw, sh, sw, pt, pl):
    """``max_pool``'s values alone (inference, where nothing reads the mask) for fixed windows (kh x kw
    every (sh, sw), padding pt/pl). Per output row: the max over its window's rows into a row padded
    with -inf, then the max over kw shifts of that row at every column (stride 1), both contiguous
    passes LLVM vectorises, then every sw-th of those. Explicit loops, not slice assignments (tens
    of nanoseconds each on 16-wide rows): ResNet18's 3x3/2 pooling of [16, 64, 32, 32] 2.3 -> 0.7 ms."""
    p, h, w = x.shape
    span = (ow - 1) * sw + 1  # window starts at stride 1
    used = min(w, span + kw - 1 - pl)  # input columns some window reads
    out = np.empty((p, oh, ow), dtype=x.dtype)
    for c in prange(p):
        padded = np.full(span + kw - 1, -np.inf, dtype=x.dtype)
        starts = np.empty(span, dtype=x.dtype)
        row = padded[pl : pl + used]
        for i in range(oh):
            y0, y1 = min(max(i * sh - pt, 0), h - 1), min(i * sh - pt + kh, h)  # y0 in the image, always
            first = x[c, y0]
            for z in range(used):
                row[z] = first[z]
            for y in range(y0 + 1, y1):
                r = x[c, y]
                for z in range(used):
                    row[z] = r[z] if r[z] > row[z] else row[z]
            for z in range(span):
                starts[z] = padded[z]
            for dx in range(1, kw):
                shifted = padded[dx:]
                for z in range(span):
                    starts[z] = shifted[z] if shifted[z] > starts[z] else starts[z]
            o = out[c, i]
            for j in range(ow):
                o[j] = starts[j * sw]
    return out


@parallel_kernel(reference=_max_2x2_same)
def max_pool_values_2x2_same(x):
    """``max_pool_values`` for 2x2 windows at stride 1 that start at every pixel and reach one row and
    column past the bottom/right edge (SAME padding: PP-HGNetV2's stem in PP-OCRv5/v6): a row pass
    and a column pass, each two loads per output. The same comparisons in the same order as
    ``max_pool_values`` (a NaN in the window's first row or column wins), 3.5x faster here: its
    general loops do not vectorise (PP-OCRv6 det's [24, 368, 368] 5.7 -> 1.6 ms, one thread)."""
    p, h, w = x.shape
    out = np.empty_like(x)
    for c in prange(p):
        row = np.empty(w, dtype=x.dtype)
        for i in range(h):
            below = min(i + 1, h - 1)
            for z in range(w):
                a = x[c, i, z]
                b = x[c, below, z]
                row[z] = b if b > a else a
            for z in range(w - 1):
                a = row[z]
                b = row[z + 1]
                out[c, i, z] = b if b > a else a
            out[c, i, w - 1] = row[w - 1]
    return out


@parallel_kernel
def max_pool_grad(g, mask, h, w):
    p, oh, ow = g.shape
    dx = np.zeros((p, h * w), dtype=g.dtype)
    for c in prange(p):
        for i in range(oh):
            for j in range(ow):
                k = mask[c, i, j]
                if k >= 0:
                    dx[c, k] += g[c, i, j]
    return dx.reshape(p, h, w)


@parallel_kernel
def gather_planes(x, mask):
    """``out[c, i, j] = x[c].flat[mask[c, i, j]]``: ``max_pool_grad``'s adjoint, values at the maxima."""
    p, _, w = x.shape
    out = np.empty(mask.shape, dtype=x.dtype)
    for c in prange(p):
        for i in range(mask.shape[1]):
            for j in range(mask.shape[2]):
                k = mask[c, i, j]
                out[c, i, j] = x[c, k // w, k % w]
    return out


@parallel_kernel(fastmath=REASSOC, reference=_window_mean)
def avg_pool(x, hs, he, ws, we, divisor):
    """Window sums in any order, so a long window row (global pooling) vectorises."""
    p = x.shape[0]
    oh, ow = hs.size, ws.size
    out = np.empty((p, oh, ow), dtype=x.dtype)
    for c in prange(p):
        for i in range(oh):
            for j in range(ow):
                acc = 0.0
                for y in range(hs[i], he[i]):
                    row = x[c, y, ws[j] : we[j]]
                    for z in range(row.size):
                        acc += row[z]
                out[c, i, j] = acc / divisor[i, j]
    return out


@parallel_kernel
def avg_pool_grad(g, hs, he, ws, we, divisor, h, w):
    p, oh, ow = g.shape
    dx = np.zeros((p, h, w), dtype=g.dtype)
    for c in prange(p):
        for i in range(oh):
            for j in range(ow):
                v = g[c, i, j] / divisor[i, j]
                for y in range(hs[i], he[i]):
                    for z in range(ws[j], we[j]):
                        dx[c, y, z] += v
    return dx


@njit(cache=True)
def _column_factor(cols, width):
    """s where ``cols[j] == j // s`` for every j (a whole-number column upsampling), else 0."""
    s = cols.size // width if width else 0
    if s < 1 or s * width != cols.size:
        return 0
    for j in range(cols.size):
        if cols[j] != j // s:
            return 0
    return s


@parallel_kernel(reference=_gather)
def gather_grid(x, rows, cols):
    """``out[p, i, j] = x[p, rows[i], cols[j]]``: nearest-neighbour resizing of [planes, H, W].

    An output row that repeats the previous one's source row is a copy of it, and a whole-number
    column factor s writes each input value s times, not a gather per output (PP-OCR det's 2x/4x/8x
    upsampling in its neck: ~2.5x faster). Flat indices: a row view per row costs its reference
    counts."""
    p, h, w = x.shape
    oh, ow = rows.size, cols.size
    out = np.empty((p, oh, ow), dtype=x.dtype)
    src, dst = x.reshape(p * h * w), out.reshape(p * oh * ow)
    s = _column_factor(cols, w)
    for c in prange(p):
        for i in range(oh):
            d0 = (c * oh + i) * ow
            if i > 0 and rows[i] == rows[i - 1]:
                for j in range(ow):
                    dst[uint64(d0 + j)] = dst[uint64(d0 - ow + j)]
                continue
            s0 = (c * h + rows[i]) * w
            if s == 2:
                for j in range(w):
                    v = src[uint64(s0 + j)]
                    dst[uint64(d0 + 2 * j)] = v
                    dst[uint64(d0 + 2 * j + 1)] = v
            elif s > 0:
                for j in range(w):
                    v = src[uint64(s0 + j)]
                    for t in range(s):
                        dst[uint64(d0 + j * s + t)] = v
            else:
                for j in range(ow):
                    dst[uint64(d0 + j)] = src[uint64(s0 + cols[j])]
    return out
