"""Fused softmax cross-entropy kernels over a [rows, classes] matrix.

One pass computes a row's max and log-sum-exp and its loss; the backward pass recomputes those two
numbers per row from the logits (the row is in cache) and rebuilds ``softmax - target`` in place,
so it reads nothing forward kept. Nothing of size [rows, classes] is allocated besides the
gradient itself. Sums accumulate in float64.

Like Paddle's softmax, shifted logits ``x - max`` are clipped at -64 before ``exp`` (so no row
loss exceeds 64 plus log C); ``log_softmax(x)[c] = max(x[c] - m, -64) - log_sum``.
"""

import math

from numba import njit, prange

from . import parallel_kernel
from .rows import row_max

CLIP = -64.0


@njit(cache=True, inline="always")
def _row_stats(row):
    """The row's max and ``log sum_c exp(max(x_c - max, -64))``."""
    m = row_max(row)
    s = 0.0
    for c in range(row.shape[0]):
        s += math.exp(max(row[c] - m, CLIP))
    return m, math.log(s)


@parallel_kernel
def hard_forward(x, label, ignore_index, smoothing, loss):
    """``loss[i] = -((1-eps) logp[i, y_i] + eps/C sum_c logp[i, c])``; rows labelled ``ignore_index`` give 0."""
    rows, classes = x.shape
    for i in prange(rows):
        row = x[i]
        m, ls = _row_stats(row)
        y = label[i]
        if y == ignore_index:
            loss[i] = 0.0
            continue
        value = (1.0 - smoothing) * (ls - max(row[y] - m, CLIP))
        if smoothing != 0.0:
            total = 0.0
            for c in range(classes):
                total += ls - max(row[c] - m, CLIP)
            value += smoothing * total / classes
        loss[i] = value


@parallel_kernel
def hard_backward(x, label, ignore_index, smoothing, g, grad):
    """``grad[i] = g_i (softmax(x_i) - target_i)`` with target the (smoothed) one-hot of ``y_i``."""
    rows, classes = x.shape
    for i in prange(rows):
        y = label[i]
        out = grad[i]
        if y == ignore_index:
            out[:] = 0.0
            continue
        gi = g[i]
        row = x[i]
        m, ls = _row_stats(row)
        off = smoothing / classes
        for c in range(classes):
            out[c] = gi * (math.exp(max(row[c] - m, CLIP) - ls) - off)
        out[y] -= gi * (1.0 - smoothing)


@parallel_kernel
def soft_forward(x, label, loss):
    """``loss[i] = -sum_c label[i, c] logp[i, c]``."""
    rows, classes = x.shape
    for i in prange(rows):
        row = x[i]
        m, ls = _row_stats(row)
        value = 0.0
        for c in range(classes):
            value += label[i, c] * (ls - max(row[c] - m, CLIP))
        loss[i] = value


@parallel_kernel
def soft_backward(x, label, g, grad):
    """``grad[i] = g_i (softmax(x_i) - label_i)``: Paddle's soft-label gradient, which assumes rows of
    ``label`` sum to one (it is the exact derivative only then)."""
    rows, classes = x.shape
    for i in prange(rows):
        gi = g[i]
        row = x[i]
        m, ls = _row_stats(row)
        out = grad[i]
        for c in range(classes):
            out[c] = gi * (math.exp(max(row[c] - m, CLIP) - ls) - label[i, c])
