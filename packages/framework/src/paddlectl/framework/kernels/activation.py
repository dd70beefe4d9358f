"""Activation kernels over flat contiguous arrays, parallel over elements (or rows).

Elementwise kernels take their constants as an array ``c`` of the input's dtype, so float32
inputs are computed in float32 arithmetic (as Paddle does) and float64 inputs in float64.
Softmax / log_softmax are fused row kernels over a 2-D [rows, n] view; as Paddle's CPU kernels
do, they clip ``x - max`` at -64 (the smallest probability is exp(-64) ~ 1.6e-28 and
log_softmax never goes below about -64).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import parallel_kernel
from .fastmath import REASSOC, exp

_SHIFT_FLOOR = -64.0

GELU_ERF_CONSTS = (0.5, 1.0, 1.0 / math.sqrt(2.0), 1.0 / math.sqrt(2.0 * math.pi))
GELU_TANH_CONSTS = (0.5, 1.0, math.sqrt(2.0 / math.pi), 0.044715, 3.0 * 0.044715)
UNIT_CONSTS = (1.0, 20.0)


@njit(cache=True, inline="always")
def _sigmoid(v, one):
    if v >= 0:
        return one / (one + math.exp(-v))
    e = math.exp(v)
    return e / (one + e)


@parallel_kernel
def relu(x, c):
    """``max(x, 0)`` as one select per element, NaN kept and -0 made 0 (as ``np.maximum``), which
    runs 2.5x slower on LeNet's [64, 6, 28, 28] activations (0.10 vs 0.04 ms)."""
    out = np.empty_like(x)
    zero = c[0] - c[0]
    for i in prange(x.size):
        v = x[i]
        out[i] = zero if v <= zero else v
    return out


@parallel_kernel
def relu_grad(out, g, c):
    """``g * (out > 0)`` in one pass (a NaN gradient stays NaN, as with Paddle's multiply)."""
    res = np.empty_like(g)
    for i in prange(g.size):
        res[i] = g[i] * (c[0] if out[i] > 0 else c[0] - c[0])
    return res


@parallel_kernel
def gelu_erf(x, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        out[i] = c[0] * v * (c[1] + math.erf(v * c[2]))
    return out


@parallel_kernel
def gelu_erf_grad(x, g, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        cdf = c[0] * (c[1] + math.erf(v * c[2]))
        out[i] = g[i] * (cdf + v * c[3] * math.exp(-c[0] * v * v))
    return out


@parallel_kernel
def gelu_tanh(x, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        out[i] = c[0] * v * (c[1] + math.tanh(c[2] * (v + c[3] * v * v * v)))
    return out


@parallel_kernel
def gelu_tanh_grad(x, g, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        t = math.tanh(c[2] * (v + c[3] * v * v * v))
        out[i] = g[i] * (c[0] * (c[1] + t) + c[0] * v * (c[1] - t * t) * c[2] * (c[1] + c[4] * v * v))
    return out


@parallel_kernel
def sigmoid(x, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        out[i] = _sigmoid(x[i], c[0])
    return out


@parallel_kernel
def silu(x, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        out[i] = x[i] * _sigmoid(x[i], c[0])
    return out


@parallel_kernel
def silu_grad(x, g, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        s = _sigmoid(v, c[0])
        out[i] = g[i] * s * (c[0] + v * (c[0] - s))
    return out


@parallel_kernel
def mish(x, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        sp = v if v > c[1] else math.log1p(math.exp(v))
        out[i] = v * math.tanh(sp)
    return out


@parallel_kernel
def mish_grad(x, g, c):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        sp = v if v > c[1] else math.log1p(math.exp(v))
        t = math.tanh(sp)
        out[i] = g[i] * (t + v * (c[0] - t * t) * _sigmoid(v, c[0]))
    return out


@njit(cache=True, inline="always")
def _row_max(xr):
    m = xr.dtype.type(-np.inf)
    for j in range(xr.size):
        v = xr[j]
        m = v if v > m else m
    return m


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
    _shifted_into(o, xr, _row_max(xr))
    for j in range(o.size):
        o[j] = exp(o[j])
    s = 0.0
    for j in range(o.size):
        s += o[j]
    inv = o.dtype.type(1.0 / s)
    for j in range(o.size):
        o[j] *= inv


@parallel_kernel(fastmath=REASSOC)
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
def softmax_bwd(y, g):
    rows, n = y.shape
    dx = np.empty_like(y)
    for r in prange(rows):
        dot = 0.0
        for j in range(n):
            dot += g[r, j] * y[r, j]
        for j in range(n):
            dx[r, j] = y[r, j] * (g[r, j] - dot)
    return dx


@parallel_kernel(fastmath=REASSOC)
def log_softmax_fwd(x):
    rows, n = x.shape
    out = np.empty_like(x)
    for r in prange(rows):
        o = out[r]
        _shifted_into(o, x[r], _row_max(x[r]))
        s = 0.0
        for j in range(n):
            s += exp(o[j])
        log_s = o.dtype.type(math.log(s))
        for j in range(n):
            o[j] -= log_s
    return out


@parallel_kernel
def log_softmax_bwd(y, g):
    rows, n = y.shape
    dx = np.empty_like(y)
    for r in prange(rows):
        s = 0.0
        for j in range(n):
            s += g[r, j]
        for j in range(n):
            dx[r, j] = g[r, j] - math.exp(y[r, j]) * s
    return dx
