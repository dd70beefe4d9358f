"""Fused softmax cross-entropy kernels over a [rows, classes] matrix.

One pass computes a row's stable log-sum-exp and its loss, keeping only the log-sum-exp (one
number per row) for the backward pass, which rebuilds ``softmax - target`` in place. Nothing of
size [rows, classes] is allocated besides the gradient itself. Sums accumulate in float64.
"""

import math

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def _row_lse(row):
    m = -np.inf
    for c in range(row.shape[0]):
        if row[c] > m:
            m = row[c]
    if not np.isfinite(m):
        return float(m)
    s = 0.0
    for c in range(row.shape[0]):
        s += math.exp(row[c] - m)
    return m + math.log(s)


@njit(cache=True, parallel=True)
def hard_forward(x, label, ignore_index, smoothing, loss, lse):
    """``loss[i] = lse_i - ((1-eps) x[i, y_i] + eps/C sum_c x[i, c])``; rows labelled ``ignore_index`` give 0."""
    rows, classes = x.shape
    for i in prange(rows):
        row = x[i]
        lse_i = _row_lse(row)
        lse[i] = lse_i
        y = label[i]
        if y == ignore_index:
            loss[i] = 0.0
            continue
        value = (1.0 - smoothing) * (lse_i - row[y])
        if smoothing != 0.0:
            total = 0.0
            for c in range(classes):
                total += row[c]
            value += smoothing * (lse_i - total / classes)
        loss[i] = value


@njit(cache=True, parallel=True)
def hard_backward(x, label, ignore_index, smoothing, lse, g, grad):
    """``grad[i] = g_i (softmax(x_i) - target_i)`` with target the (smoothed) one-hot of ``y_i``."""
    rows, classes = x.shape
    for i in prange(rows):
        y = label[i]
        out = grad[i]
        if y == ignore_index:
            out[:] = 0.0
            continue
        gi = g[i]
        lse_i = lse[i]
        row = x[i]
        off = smoothing / classes
        for c in range(classes):
            out[c] = gi * (math.exp(row[c] - lse_i) - off)
        out[y] -= gi * (1.0 - smoothing)


@njit(cache=True, parallel=True)
def soft_forward(x, label, loss, lse):
    """``loss[i] = sum_c label[i, c] (lse_i - x[i, c])``."""
    rows, classes = x.shape
    for i in prange(rows):
        row = x[i]
        lse_i = _row_lse(row)
        lse[i] = lse_i
        value = 0.0
        for c in range(classes):
            value += label[i, c] * (lse_i - row[c])
        loss[i] = value


@njit(cache=True, parallel=True)
def soft_backward(x, label, lse, g, grad):
    """``grad[i] = g_i (softmax(x_i) - label_i)``: Paddle's soft-label gradient, which assumes rows of
    ``label`` sum to one (it is the exact derivative only then)."""
    rows, classes = x.shape
    for i in prange(rows):
        gi = g[i]
        lse_i = lse[i]
        row = x[i]
        out = grad[i]
        for c in range(classes):
            out[c] = gi * (math.exp(row[c] - lse_i) - label[i, c])
