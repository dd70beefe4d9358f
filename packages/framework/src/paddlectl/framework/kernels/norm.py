"""Fused normalisation kernels: a few passes over the data instead of NumPy chains of temporaries.
Sums accumulate in float64, reassociated (``fastmath.REASSOC``) so that they vectorise into partial
sums: a serial float64 chain costs ~9 ns an element, several times the memory traffic.

Layer norm works on a [rows, n] view (each row normalised on its own; parallel over rows);
batch norm on an [outer, channels, inner] view, which covers NC, NCL, NCHW (outer=N; parallel
over channels) and channels-last layouts (outer=N*spatial, inner=1: row kernels that sum every
channel at once along the contiguous rows, parallel over fixed row blocks).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from . import njit, parallel_kernel
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
def _channel_stats(x):
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
def _channel_apply(x, mean, rstd, weight, bias):
    """``batch_norm_apply`` a channel per task."""
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
def _channel_bwd(x, g, mean, rstd, weight, batch_stats_used, eps):
    """``batch_norm_bwd`` a channel per task, the channel then in cache. Three passes a channel: its mean; the variance together with
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


# Channels last ([rows, C, 1]): a channel is every C-th value, so the per-channel loops above would
# gather; these run along [rows, C] rows instead, every channel's sums at once (contiguous, vectorised).


@parallel_kernel(fastmath=REASSOC)
def _column_sums(x, g, shift):
    """Per-channel float64 sums over the rows of [rows, C] arrays: of d = x - shift, d * d, g and
    g * d, in ``_CHUNKS`` row blocks (a fixed split: the sum's order does not depend on threads)."""
    rows, c = x.shape
    chunk = (rows + _CHUNKS - 1) // _CHUNKS
    parts = np.zeros((_CHUNKS, 4, c), dtype=np.float64)
    for k in prange(_CHUNKS):
        s = parts[k]
        for r in range(k * chunk, min(rows, (k + 1) * chunk)):
            for ch in range(c):
                d = x[r, ch] - shift[ch]
                gi = g[r, ch]
                s[0, ch] += d
                s[1, ch] += d * d
                s[2, ch] += gi
                s[3, ch] += gi * d
    return parts.sum(axis=0)


@parallel_kernel(fastmath=REASSOC)
def _rows_affine(x, scale, centre, bias):
    """``scale * (x - centre) + bias`` per channel of a [rows, C] array, in x's dtype."""
    rows, c = x.shape
    out = np.empty_like(x)
    scale, centre, bias = scale.astype(x.dtype), centre.astype(x.dtype), bias.astype(x.dtype)
    for r in prange(rows):
        for ch in range(c):
            out[r, ch] = scale[ch] * (x[r, ch] - centre[ch]) + bias[ch]
    return out


@parallel_kernel(fastmath=REASSOC)
def _rows_dx(x, g, k, a, b, mean):
    """``k * (g - a) - b * (x - mean)`` per channel of [rows, C] arrays, in x's dtype."""
    rows, c = x.shape
    dx = np.empty_like(x)
    k, a, b, mean = k.astype(x.dtype), a.astype(x.dtype), b.astype(x.dtype), mean.astype(x.dtype)
    for r in prange(rows):
        for ch in range(c):
            dx[r, ch] = k[ch] * (g[r, ch] - a[ch]) - b[ch] * (x[r, ch] - mean[ch])
    return dx


def _rows(x):
    """[outer, C, inner] ``x`` as [rows, C] where it is channels last with several channels (the
    row kernels), else None."""
    return x.reshape(x.shape[0], x.shape[1]) if x.shape[2] == 1 and x.shape[1] > 1 else None


def batch_stats(x):
    """Per-channel float64 mean and biased variance of an [outer, C, inner] array (the variance of
    x - mean: no cancellation)."""
    rows = _rows(x)
    if rows is None:
        return _channel_stats(x)
    count = max(rows.shape[0], 1)
    mean = _column_sums(rows, rows, np.zeros(rows.shape[1]))[0] / count
    return mean, _column_sums(rows, rows, mean)[1] / count


def batch_norm_apply(x, mean, rstd, weight, bias):
    """y = (x - mean) * rstd * weight + bias, per channel of an [outer, C, inner] array."""
    rows = _rows(x)
    if rows is None:
        return _channel_apply(x, mean, rstd, weight, bias)
    return _rows_affine(rows, rstd * weight, mean, bias).reshape(x.shape)


def batch_norm_bwd(x, g, mean, rstd, weight, batch_stats_used, eps):
    """dx, dweight, dbias of batch norm; with batch statistics (recomputed here from x; ``mean`` /
    ``rstd`` unused) dx also flows through mean and var, else ``mean`` and ``rstd`` are the
    constants used. Sums in float64, dx in x's dtype (as Paddle)."""
    rows = _rows(x)
    if rows is None:
        return _channel_bwd(x, g, mean, rstd, weight, batch_stats_used, eps)
    grows, count = g.reshape(rows.shape), max(rows.shape[0], 1)
    if batch_stats_used:
        mean = _column_sums(rows, grows, np.zeros(rows.shape[1]))[0] / count
    _, dd, sg, sgx = _column_sums(rows, grows, mean)
    if not batch_stats_used:
        k = weight * rstd
        return _rows_affine(grows, k, np.zeros_like(k), np.zeros_like(k)).reshape(x.shape), sgx * rstd, sg
    rstd = 1.0 / np.sqrt(dd / count + eps)
    k = weight * rstd
    dx = _rows_dx(rows, grows, k, sg / count, k * sgx * rstd * rstd / count, mean)
    return dx.reshape(x.shape), sgx * rstd, sg
