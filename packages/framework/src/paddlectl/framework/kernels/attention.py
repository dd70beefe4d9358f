"""Multi-head attention at inference, one (image, head) per task, both products on register tiles.

``softmax(scale * Q K^T + mask) V`` for each head of [N, L, H*D] float32 ``q``, ``k``, ``v`` (views
of a wider projection output too), the mask one row of key offsets per image. As a stack of
NumPy products a head is two BLAS calls on 128 x 32 x 128 products, which OpenBLAS runs at a fifth
of its speed, and the heads one after another (MiniLM at batch 1: 1.2 ms an attention, 7 of 25 ms
a run, no gain from a second thread). Here a task packs its head's K^T (scaled, the mask as the
panels' bias row) and V into ``kernels.gemm`` panels, multiplies Q by the first on the micro-kernel
into a score block, softmaxes the rows in place and multiplies them by the second straight into the
head's columns of the output. The op runs the tasks in parallel from
``ops.attention.PARALLEL_MIN_SCORES`` scores: below, waking a second thread costs more than it saves.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import njit, parallel_kernel
from .activation import _softmax_row_into
from .fastmath import REASSOC
from .gemm import LANES, MR, _tile_intrinsic

WIDTH = 2 * LANES
"""Columns per packed panel (two vector registers): the key block of a score tile, and the
head-dimension block of an output tile (a head dimension is a multiple of it: 32 or 64 here)."""

_TILE = _tile_intrinsic(2, MR, stride=WIDTH)


def fits(head_dim: int) -> bool:
    """Whether a head of this size splits into whole output panels."""
    return head_dim % WIDTH == 0


@njit(cache=True)
def _pack_keys(k, n, h, d, lk, scale, mask, kt):
    """Panels of ``scale * K_h^T`` ([Lk/W, D + 1, W]); row 0 the mask's key offsets, -inf past Lk."""
    base = h * d
    for p in range(kt.shape[0]):
        for j in range(WIDTH):
            key = p * WIDTH + j
            if key < lk:
                kt[p, 0, j] = mask[n % mask.shape[0], key]
                for c in range(d):
                    kt[p, c + 1, j] = scale * k[n, key, base + c]
            else:
                kt[p, 0, j] = -np.inf
                for c in range(d):
                    kt[p, c + 1, j] = 0.0


@njit(cache=True)
def _pack_values(v, n, h, d, lk, vp):
    """Panels of V_h ([D/W, Lk padded + 1, W]); the bias row and the padded keys' rows zero."""
    base = h * d
    for p in range(vp.shape[0]):
        for j in range(WIDTH):
            vp[p, 0, j] = 0.0
        for key in range(vp.shape[1] - 1):
            for j in range(WIDTH):
                vp[p, key + 1, j] = v[n, key, base + p * WIDTH + j] if key < lk else 0.0


@parallel_kernel(fastmath=REASSOC)
def attention(q, k, v, mask, scale, heads, out):
    """``out`` [N * Lq, H * D] (contiguous) from ``q`` [N, Lq, H*D], ``k`` [N, Lk, H*D], ``v``
    [N, Lk, H*Dv] (any strides, unit stride along the last axis) and ``mask`` [N or 1, Lk]."""
    n_img, lq, width = q.shape
    lk, d, dv = k.shape[1], width // heads, v.shape[2] // heads
    padded = -(-lk // WIDTH) * WIDTH
    sq_n, sq_l = q.strides[0] // 4, q.strides[1] // 4
    tasks = n_img * heads
    for t in prange(tasks):
        n, h = t // heads, t % heads
        kt = np.empty((padded // WIDTH, d + 1, WIDTH), np.float32)
        vp = np.empty((dv // WIDTH, padded + 1, WIDTH), np.float32)
        scores = np.empty((lq, padded), np.float32)
        _pack_keys(k, n, h, d, lk, scale, mask, kt)
        _pack_values(v, n, h, dv, lk, vp)
        for i0 in range(0, lq, MR):
            rows = min(MR, lq - i0)
            start = n * sq_n + i0 * sq_l + h * d
            for p in range(kt.shape[0]):
                _TILE(q, start, sq_l, rows, kt, p * (d + 1) * WIDTH, d, scores, padded, i0, p * WIDTH, False)
            for r in range(i0, i0 + rows):
                _softmax_row_into(scores[r, :lk], scores[r, :lk])
                for j in range(lk, padded):
                    scores[r, j] = 0.0
            for p in range(vp.shape[0]):
                col = h * dv + p * WIDTH
                _TILE(scores, i0 * padded, padded, rows, vp, p * (padded + 1) * WIDTH, padded, out, heads * dv,
                      n * lq + i0, col, False)  # fmt: skip
    return out
