"""Fused normalisation kernels: one pass for statistics, one for the output, and a two-pass
backward, instead of NumPy chains of temporaries. Sums accumulate in float64 registers.

Layer norm works on a [rows, n] view (each row normalised on its own; parallel over rows);
batch norm on an [outer, channels, inner] view (parallel over channels), which covers NC, NCL,
NCHW (outer=N) and channels-last layouts (outer=N*spatial, inner=1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import parallel_kernel
from .fastmath import REASSOC

_CHUNKS = 16  # row blocks whose partial parameter gradients are summed at the end


@njit(cache=True, inline="always", fastmath=REASSOC)
def _row_moments(xr, eps):
    """A row's float64 mean and 1 / sqrt(variance + eps) (sums vectorised, in any order)."""
    n = xr.shape[0]
    s = 0.0
    for j in range(n):
        s += xr[j]
    mu = s / n if n else 0.0
    v = 0.0
    for j in range(n):
        d = xr[j] - mu
        v += d * d
    return mu, 1.0 / math.sqrt((v / n if n else 0.0) + eps)


@parallel_kernel(fastmath=REASSOC)
def layer_norm_fwd(x, weight, bias, eps, affine):
    """Each row's float64 mean and rstd, then its output in x's dtype."""
    rows, n = x.shape
    out = np.empty_like(x)
    mean = np.empty(rows, dtype=np.float64)
    rstd = np.empty(rows, dtype=np.float64)
    for r in prange(rows):
        xr, o = x[r], out[r]
        mu, inv = _row_moments(xr, eps)
        mean[r] = mu
        rstd[r] = inv
        shift, scale = o.dtype.type(mu), o.dtype.type(inv)
        if affine:
            for j in range(n):
                o[j] = (xr[j] - shift) * scale * weight[j] + bias[j]
        else:
            for j in range(n):
                o[j] = (xr[j] - shift) * scale
    return out, mean, rstd


@parallel_kernel(fastmath=REASSOC)
def layer_norm_bwd(x, g, eps, weight, affine):
    """Returns dx and the per-column sums dweight = sum(g * xhat), dbias = sum(g). Each row's
    statistics are recomputed from x while the row is in cache: backward reads nothing forward kept."""
    rows, n = x.shape
    dx = np.empty_like(x)
    chunk = (rows + _CHUNKS - 1) // _CHUNKS
    dw_part = np.zeros((_CHUNKS, n), dtype=np.float64)
    db_part = np.zeros((_CHUNKS, n), dtype=np.float64)
    for k in prange(_CHUNKS):
        for r in range(k * chunk, min(rows, (k + 1) * chunk)):
            mu, inv = _row_moments(x[r], eps)
            s_g = 0.0
            s_gx = 0.0
            for j in range(n):
                xhat = (x[r, j] - mu) * inv
                gj = g[r, j]
                dw_part[k, j] += gj * xhat
                db_part[k, j] += gj
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
    return dx, dw_part.sum(axis=0), db_part.sum(axis=0)


@njit(cache=True, inline="always", fastmath=REASSOC)
def _channel_mean(x, ch):
    """Channel ``ch``'s float64 mean in an [outer, C, inner] array (summed in any order: the
    float64 partial sums vectorise, a single serial chain cost ~9 ns an element)."""
    outer, _, inner = x.shape
    s = 0.0
    for o in range(outer):
        for i in range(inner):
            s += x[o, ch, i]
    count = outer * inner
    return s / count if count else 0.0


@parallel_kernel(fastmath=REASSOC)
def batch_stats(x):
    """Per-channel mean and biased variance of an [outer, C, inner] array: two passes (the
    variance of x - mean, no cancellation), the channel in cache for the second."""
    outer, c, inner = x.shape
    count = outer * inner
    mean = np.zeros(c, dtype=np.float64)
    var = np.zeros(c, dtype=np.float64)
    for ch in prange(c):
        mu = _channel_mean(x, ch)
        v = 0.0
        for o in range(outer):
            for i in range(inner):
                d = x[o, ch, i] - mu
                v += d * d
        mean[ch] = mu
        var[ch] = v / count if count else 0.0
    return mean, var


@parallel_kernel(fastmath=REASSOC)
def batch_norm_apply(x, mean, rstd, weight, bias):
    """y = (x - mean) * rstd * weight + bias, per channel of an [outer, C, inner] array."""
    outer, c, inner = x.shape
    out = np.empty_like(x)
    for ch in prange(c):
        scale = rstd[ch] * weight[ch]
        shift = bias[ch] - mean[ch] * scale
        for o in range(outer):
            for i in range(inner):
                out[o, ch, i] = x[o, ch, i] * scale + shift
    return out


@parallel_kernel(fastmath=REASSOC)
def batch_norm_bwd(x, g, mean, rstd, weight, batch_stats_used, eps):
    """dx, dweight, dbias of batch norm; with batch statistics (recomputed here from x, the channel
    then in cache; ``mean``/``rstd`` unused) dx also flows through mean and var, else ``mean`` and
    ``rstd`` are the constants used. Three passes a channel: its mean; the variance together with
    the sums of g and g * (x - mean) (all in float64); dx."""
    outer, c, inner = x.shape
    count = outer * inner
    dw = np.zeros(c, dtype=np.float64)
    db = np.zeros(c, dtype=np.float64)
    dx = np.empty_like(x)
    for ch in prange(c):
        mu = _channel_mean(x, ch) if batch_stats_used else mean[ch]
        sg = 0.0
        sgx = 0.0
        v = 0.0
        for o in range(outer):
            for i in range(inner):
                gi = g[o, ch, i]
                d = x[o, ch, i] - mu
                sg += gi
                sgx += gi * d
                v += d * d
        inv = 1.0 / math.sqrt((v / count if count else 0.0) + eps) if batch_stats_used else rstd[ch]
        db[ch] = sg
        dw[ch] = sgx * inv
        k = weight[ch] * inv
        kt = dx.dtype.type(k)  # dx in x's dtype, as Paddle: float32 runs twice float64's vector lanes
        if batch_stats_used and count:
            at, mt = dx.dtype.type(sg / count), dx.dtype.type(mu)
            bt = dx.dtype.type(k * sgx * inv * inv / count)
            for o in range(outer):
                for i in range(inner):
                    dx[o, ch, i] = kt * (g[o, ch, i] - at) - (x[o, ch, i] - mt) * bt
        else:
            for o in range(outer):
                for i in range(inner):
                    dx[o, ch, i] = kt * g[o, ch, i]
    return dx, dw, db
