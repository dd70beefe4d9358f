"""Activation kernels: Numba ufuncs for activations NumPy would build from several temporaries,
and row-wise fused softmax / log_softmax (forward and backward) over a 2-D [rows, n] view.

As Paddle's CPU kernels do, softmax and log_softmax clip ``x - max`` at -64 (so the smallest
probability is exp(-64) ~ 1.6e-28 and log_softmax never goes below about -64)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, vectorize

_SIGS = ["float32(float32)", "float64(float64)"]
_SIGS2 = ["float32(float32, float32)", "float64(float64, float64)"]
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SHIFT_FLOOR = -64.0


@vectorize(_SIGS, cache=True)
def gelu_erf(x):
    return 0.5 * x * (1.0 + math.erf(x * _INV_SQRT_2))


@vectorize(_SIGS2, cache=True)
def gelu_erf_grad(x, g):
    cdf = 0.5 * (1.0 + math.erf(x * _INV_SQRT_2))
    return g * (cdf + x * _INV_SQRT_2PI * math.exp(-0.5 * x * x))


@vectorize(_SIGS, cache=True)
def gelu_tanh(x):
    return 0.5 * x * (1.0 + math.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


@vectorize(_SIGS2, cache=True)
def gelu_tanh_grad(x, g):
    t = math.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x))


@vectorize(_SIGS, cache=True)
def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@vectorize(_SIGS, cache=True)
def silu(x):
    if x >= 0:
        return x / (1.0 + math.exp(-x))
    e = math.exp(x)
    return x * e / (1.0 + e)


@vectorize(_SIGS2, cache=True)
def silu_grad(x, g):
    if x >= 0:
        s = 1.0 / (1.0 + math.exp(-x))
    else:
        e = math.exp(x)
        s = e / (1.0 + e)
    return g * s * (1.0 + x * (1.0 - s))


@vectorize(_SIGS, cache=True)
def mish(x):
    sp = x if x > 20.0 else math.log1p(math.exp(x))
    return x * math.tanh(sp)


@vectorize(_SIGS2, cache=True)
def mish_grad(x, g):
    sp = x if x > 20.0 else math.log1p(math.exp(x))
    t = math.tanh(sp)
    if x >= 0:
        s = 1.0 / (1.0 + math.exp(-x))
    else:
        e = math.exp(x)
        s = e / (1.0 + e)
    return g * (t + x * (1.0 - t * t) * s)


@njit(cache=True)
def softmax_fwd(x):
    rows, n = x.shape
    out = np.empty_like(x)
    for r in range(rows):
        m = -np.inf
        for j in range(n):
            if x[r, j] > m:
                m = x[r, j]
        s = 0.0
        for j in range(n):
            d = x[r, j] - m
            if d < _SHIFT_FLOOR:
                d = _SHIFT_FLOOR
            e = math.exp(d)
            out[r, j] = e
            s += e
        inv = 1.0 / s
        for j in range(n):
            out[r, j] *= inv
    return out


@njit(cache=True)
def softmax_bwd(y, g):
    rows, n = y.shape
    dx = np.empty_like(y)
    for r in range(rows):
        dot = 0.0
        for j in range(n):
            dot += g[r, j] * y[r, j]
        for j in range(n):
            dx[r, j] = y[r, j] * (g[r, j] - dot)
    return dx


@njit(cache=True)
def log_softmax_fwd(x):
    rows, n = x.shape
    out = np.empty_like(x)
    for r in range(rows):
        m = -np.inf
        for j in range(n):
            if x[r, j] > m:
                m = x[r, j]
        s = 0.0
        for j in range(n):
            d = x[r, j] - m
            if d < _SHIFT_FLOOR:
                d = _SHIFT_FLOOR
            out[r, j] = d
            s += math.exp(d)
        log_s = math.log(s)
        for j in range(n):
            out[r, j] -= log_s
    return out


@njit(cache=True)
def log_softmax_bwd(y, g):
    rows, n = y.shape
    dx = np.empty_like(y)
    for r in range(rows):
        s = 0.0
        for j in range(n):
            s += g[r, j]
        for j in range(n):
            dx[r, j] = g[r, j] - math.exp(y[r, j]) * s
    return dx
