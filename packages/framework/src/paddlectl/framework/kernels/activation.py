"""Softmax kernels: fused row kernels over a 2-D [rows, n] view, parallel over rows.

As Paddle's CPU kernels do, they clip ``x - max`` at -64 (the smallest probability is exp(-64) ~
1.6e-28 and log_softmax never goes below about -64). The elementwise activations have no kernels
here: theirs are generated from each op's scalar expression (``kernels.launch``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from . import njit, parallel_kernel
from .fastmath import REASSOC, exp
from .rows import row_max

_SHIFT_FLOOR = -64.0


@njit(cache=True, inline="always")
def _shifted_into(out, xr, m):
    """``out = xr - m`` clipped below at -64, as Paddle's CPU softmax kernels do."""
    floor = xr.dtype.type(_SHIFT_FLOOR)
    for j in range(xr.size):
        d = xr[j] - m
        out[j] = floor if d < floor else d


@njit(cache=True, inline="always")
def _softmax_row_into(o, xr):
    """``o = softmax(xr)`` for one row: shift, exp (``fastmath.exp``, vectorised for float32), sum
    (float64), scale; each a separate loop over the row so each vectorises. ``o`` may be ``xr``."""
    _shifted_into(o, xr, row_max(xr))
    for j in range(o.size):
        o[j] = exp(o[j])
    s = 0.0
    for j in range(o.size):
        s += o[j]
    inv = o.dtype.type(1.0 / s)
    for j in range(o.size):
        o[j] *= inv


def _softmax_rows(x):
    """``softmax_fwd`` in NumPy (``kernels.background``): the same clipped shift, sum in float64."""
    e = np.exp(np.maximum(x - x.max(axis=1, keepdims=True), x.dtype.type(_SHIFT_FLOOR)))
    return (e * (1.0 / e.sum(axis=1, dtype=np.float64, keepdims=True)).astype(x.dtype)).astype(x.dtype)


@parallel_kernel(fastmath=REASSOC, reference=_softmax_rows)
def softmax_fwd(x):
    out = np.empty_like(x)
    for r in prange(x.shape[0]):
        _softmax_row_into(out[r], x[r])
    return out


@parallel_kernel(fastmath=REASSOC)
def attention_softmax(scores, mask, c):
    """In place on attention scores [B, H, Lq, Lk]: each row becomes ``softmax(c[0] * row + mask)``,
    ``mask`` (None or a view broadcast to the scores' shape) added before the shift. One pass over
    the scores instead of a scale, a mask add and a softmax each writing a new array."""
    heads, lq, lk = scores.shape[1], scores.shape[2], scores.shape[3]
    rows = scores.reshape(-1, lk)
    for r in prange(rows.shape[0]):
        row = rows[r]
        if mask is None:
            for j in range(lk):
                row[j] *= c[0]
        else:
            m = mask[r // (heads * lq), (r // lq) % heads, r % lq]
            for j in range(lk):
                row[j] = row[j] * c[0] + m[j]
        _softmax_row_into(row, row)


@parallel_kernel(fastmath=REASSOC)
def _row_bwd(y, g, log):
    """The input gradient of softmax (``y`` its output) or, with ``log``, of log_softmax: per row one
    reduction (``sum(g * y)``, or ``sum(g)``) and one elementwise pass."""
    rows, n = y.shape
    dx = np.empty_like(y)
    for r in prange(rows):
        acc = 0.0
        for j in range(n):
            acc += g[r, j] if log else g[r, j] * y[r, j]
        for j in range(n):
            dx[r, j] = g[r, j] - math.exp(y[r, j]) * acc if log else y[r, j] * (g[r, j] - acc)
    return dx


def softmax_bwd(y, g):
    """``y * (g - sum(g * y))`` per row: softmax's input gradient from its output."""
    return _row_bwd(y, g, False)


def log_softmax_bwd(y, g):
    """``g - exp(y) * sum(g)`` per row: log_softmax's input gradient from its output."""
    return _row_bwd(y, g, True)


@parallel_kernel(fastmath=REASSOC)
def log_softmax_fwd(x):
    rows, n = x.shape
    out = np.empty_like(x)
    for r in prange(rows):
        o = out[r]
        _shifted_into(o, x[r], row_max(x[r]))
        s = 0.0
        for j in range(n):
            s += exp(o[j])
        log_s = o.dtype.type(math.log(s))
        for j in range(n):
            o[j] -= log_s
    return out
