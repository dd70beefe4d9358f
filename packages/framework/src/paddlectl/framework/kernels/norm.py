"""Fused normalisation kernels: one pass for statistics, one for the output, and a two-pass
backward, instead of NumPy chains of temporaries. Sums accumulate in float64 registers.

Layer norm works on a [rows, n] view (each row normalised on its own); batch norm on an
[outer, channels, inner] view, which covers NC, NCL, NCHW (outer=N) and channels-last
layouts (outer=N*spatial, inner=1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def layer_norm_fwd(x, weight, bias, eps, affine):
    rows, n = x.shape
    out = np.empty_like(x)
    mean = np.empty(rows, dtype=np.float64)
    rstd = np.empty(rows, dtype=np.float64)
    for r in range(rows):
        s = 0.0
        for j in range(n):
            s += x[r, j]
        mu = s / n if n else 0.0
        v = 0.0
        for j in range(n):
            d = x[r, j] - mu
            v += d * d
        inv = 1.0 / math.sqrt((v / n if n else 0.0) + eps)
        mean[r] = mu
        rstd[r] = inv
        if affine:
            for j in range(n):
                out[r, j] = (x[r, j] - mu) * inv * weight[j] + bias[j]
        else:
            for j in range(n):
                out[r, j] = (x[r, j] - mu) * inv
    return out, mean, rstd


@njit(cache=True)
def layer_norm_bwd(x, g, mean, rstd, weight, affine):
    """Returns dx and the per-column sums dweight = sum(g * xhat), dbias = sum(g)."""
    rows, n = x.shape
    dx = np.empty_like(x)
    dw = np.zeros(n, dtype=np.float64)
    db = np.zeros(n, dtype=np.float64)
    for r in range(rows):
        mu = mean[r]
        inv = rstd[r]
        s_g = 0.0
        s_gx = 0.0
        for j in range(n):
            xhat = (x[r, j] - mu) * inv
            gj = g[r, j]
            dw[j] += gj * xhat
            db[j] += gj
            if affine:
                gj = gj * weight[j]
            s_g += gj
            s_gx += gj * xhat
        a = s_g / n
        b = s_gx / n
        for j in range(n):
            xhat = (x[r, j] - mu) * inv
            gj = g[r, j] * weight[j] if affine else g[r, j]
            dx[r, j] = inv * (gj - a - xhat * b)
    return dx, dw, db


@njit(cache=True)
def batch_stats(x):
    """Per-channel mean and biased variance of an [outer, C, inner] array."""
    outer, c, inner = x.shape
    count = outer * inner
    mean = np.zeros(c, dtype=np.float64)
    var = np.zeros(c, dtype=np.float64)
    for o in range(outer):
        for ch in range(c):
            s = 0.0
            for i in range(inner):
                s += x[o, ch, i]
            mean[ch] += s
    for ch in range(c):
        mean[ch] = mean[ch] / count if count else 0.0
    for o in range(outer):
        for ch in range(c):
            mu = mean[ch]
            v = 0.0
            for i in range(inner):
                d = x[o, ch, i] - mu
                v += d * d
            var[ch] += v
    for ch in range(c):
        var[ch] = var[ch] / count if count else 0.0
    return mean, var


@njit(cache=True)
def batch_norm_apply(x, mean, rstd, weight, bias):
    """y = (x - mean) * rstd * weight + bias, per channel of an [outer, C, inner] array."""
    outer, c, inner = x.shape
    out = np.empty_like(x)
    for o in range(outer):
        for ch in range(c):
            scale = rstd[ch] * weight[ch]
            shift = bias[ch] - mean[ch] * scale
            for i in range(inner):
                out[o, ch, i] = x[o, ch, i] * scale + shift
    return out


@njit(cache=True)
def batch_norm_bwd(x, g, mean, rstd, weight, batch_stats_used):
    """dx, dweight, dbias of batch norm; with batch statistics, dx also flows through mean and var."""
    outer, c, inner = x.shape
    count = outer * inner
    dw = np.zeros(c, dtype=np.float64)
    db = np.zeros(c, dtype=np.float64)
    for o in range(outer):
        for ch in range(c):
            mu = mean[ch]
            inv = rstd[ch]
            sg = 0.0
            sgx = 0.0
            for i in range(inner):
                gi = g[o, ch, i]
                sg += gi
                sgx += gi * (x[o, ch, i] - mu)
            db[ch] += sg
            dw[ch] += sgx * inv
    dx = np.empty_like(x)
    for o in range(outer):
        for ch in range(c):
            mu = mean[ch]
            inv = rstd[ch]
            k = weight[ch] * inv
            if batch_stats_used and count:
                a = db[ch] / count
                b = dw[ch] / count
                for i in range(inner):
                    xhat = (x[o, ch, i] - mu) * inv
                    dx[o, ch, i] = k * (g[o, ch, i] - a - xhat * b)
            else:
                for i in range(inner):
                    dx[o, ch, i] = k * g[o, ch, i]
    return dx, dw, db
