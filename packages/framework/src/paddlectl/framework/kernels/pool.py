"""Window pooling over [planes, H, W] arrays, and the nearest-neighbour gather resizing uses;
each plane (image x channel) is one parallel task.

Windows are given per output row/column as clipped ``[start, end)`` bounds, so the same kernels
serve fixed-size pooling (with padding and ceil mode) and adaptive pooling.
"""

import numpy as np
from numba import prange

from . import parallel_kernel
from .fastmath import REASSOC


@parallel_kernel
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


@parallel_kernel
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


@parallel_kernel
def max_pool_values(x, hs, ws, kh, kw, sh, sw, pt, pl):
    """``max_pool``'s values alone (inference, where nothing reads the mask) for fixed windows (kh x kw
    every (sh, sw), padding pt/pl): each image row is copied once into a buffer padded with -inf,
    then each kernel column offset is one pass over the row's outputs, a loop LLVM vectorises (with
    the mask it stays scalar: 5x slower). Outputs start at their window's first in-image element
    (``hs``, ``ws``: the plan's clipped starts), as in ``max_pool``."""
    p, h, w = x.shape
    oh, ow = hs.size, ws.size
    out = np.empty((p, oh, ow), dtype=x.dtype)
    width = max((ow - 1) * sw + kw, pl + w)
    for c in prange(p):
        buf = np.full(width, -np.inf, dtype=x.dtype)
        for i in range(oh):
            o = out[c, i]
            for j in range(ow):
                o[j] = x[c, hs[i], ws[j]]
            for dy in range(kh):
                y = i * sh - pt + dy
                if y < 0 or y >= h:
                    continue
                row = x[c, y]
                for z in range(w):
                    buf[pl + z] = row[z]
                for dx in range(kw):
                    for j in range(ow):
                        v = buf[j * sw + dx]
                        o[j] = v if v > o[j] else o[j]
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


@parallel_kernel(fastmath=REASSOC)
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


@parallel_kernel
def gather_grid(x, rows, cols):
    """``out[p, i, j] = x[p, rows[i], cols[j]]``: nearest-neighbour resizing of [planes, H, W]."""
    p = x.shape[0]
    out = np.empty((p, rows.size, cols.size), dtype=x.dtype)
    for c in prange(p):
        for i in range(rows.size):
            src = x[c, rows[i]]
            dst = out[c, i]
            for j in range(cols.size):
                dst[j] = src[cols[j]]
    return out
