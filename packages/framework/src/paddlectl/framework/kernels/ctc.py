"""CTC loss and its gradient with respect to unnormalised logits, one batch entry per thread.

As in warp-ctc (which Paddle's ``ctc_loss`` calls), the inputs are logits: each frame is
log-softmaxed here, the alpha/beta recursions run in log space over the blank-extended label,
and the gradient ``softmax - posterior`` is produced in the same pass as the loss.
"""

import math

import numpy as np
from numba import prange

from . import njit, parallel_kernel
from .rows import row_max


@njit(cache=True, inline="always")
def _lse2(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@njit(cache=True)
def _log_softmax(frames, out):
    for t in range(frames.shape[0]):
        row = frames[t]
        m = row_max(row)
        s = 0.0
        for c in range(row.shape[0]):
            s += math.exp(row[c] - m)
        lse = m + math.log(s)
        for c in range(row.shape[0]):
            out[t, c] = row[c] - lse


@njit(cache=True)
def _one(logits, b, labels, steps, length, blank, want_grad, scale, grad):
    """Loss of batch entry ``b``; fills ``grad[:, b, :]`` when ``want_grad``."""
    classes = logits.shape[2]
    states = 2 * length + 1
    ext = np.full(states, blank, dtype=np.int64)
    for k in range(length):
        ext[2 * k + 1] = labels[b, k]
    if steps == 0:
        return 0.0 if length == 0 else np.inf
    logp = np.empty((steps, classes))
    _log_softmax(logits[:steps, b, :], logp)
    alpha = np.full((steps, states), -np.inf)
    alpha[0, 0] = logp[0, blank]
    if states > 1:
        alpha[0, 1] = logp[0, ext[1]]
    for t in range(1, steps):
        for s in range(states):
            a = alpha[t - 1, s]
            if s >= 1:
                a = _lse2(a, alpha[t - 1, s - 1])
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                a = _lse2(a, alpha[t - 1, s - 2])
            if a != -np.inf:
                alpha[t, s] = a + logp[t, ext[s]]
    ll = alpha[steps - 1, states - 1]
    if states > 1:
        ll = _lse2(ll, alpha[steps - 1, states - 2])
    if not want_grad:
        return -ll
    if ll == -np.inf:
        grad[:, b, :] = 0.0
        return np.inf
    # beta[t, s]: log-probability of emitting the rest after frame t, given state s at frame t.
    beta = np.full((steps, states), -np.inf)
    beta[steps - 1, states - 1] = 0.0
    if states > 1:
        beta[steps - 1, states - 2] = 0.0
    for t in range(steps - 2, -1, -1):
        for s in range(states):
            v = beta[t + 1, s] + logp[t + 1, ext[s]]
            if s + 1 < states:
                v = _lse2(v, beta[t + 1, s + 1] + logp[t + 1, ext[s + 1]])
            if s + 2 < states and ext[s + 2] != blank and ext[s + 2] != ext[s]:
                v = _lse2(v, beta[t + 1, s + 2] + logp[t + 1, ext[s + 2]])
            beta[t, s] = v
    post = np.empty(classes)
    for t in range(steps):
        post[:] = 0.0
        for s in range(states):
            gamma = alpha[t, s] + beta[t, s]
            if gamma != -np.inf:
                post[ext[s]] += math.exp(gamma - ll)
        for c in range(classes):
            grad[t, b, c] = scale[b] * (math.exp(logp[t, c]) - post[c])
    grad[steps:, b, :] = 0.0
    return -ll


@parallel_kernel
def ctc(logits, labels, input_lengths, label_lengths, blank, want_grad, scale, loss, grad):
    """``loss[b] = -log p(labels[b] | logits[:T_b, b])``; ``grad`` gets d loss[b] / d logits times ``scale[b]``."""
    for b in prange(logits.shape[1]):
        loss[b] = _one(logits, b, labels, input_lengths[b], label_lengths[b], blank, want_grad, scale, grad)
