"""Linear-chain CRF kernels, one batch entry per thread: Viterbi decoding and the forward-backward
pass that gives the negative log-likelihood and its gradient in one sweep.

A tag path ``y`` of length L scores ``start[y_0] + sum_t emission[t, y_t] + sum_t trans[y_{t-1}, y_t]
+ stop[y_{L-1}]``; the op layer maps Paddle's transition layouts onto ``start``/``stop``/``trans``.
Everything runs in float64 log space; the per-entry transition gradient is kept apart
(``g_weights[b]``) so threads never write the same cell.
"""

import math

import numpy as np
from numba import prange

from . import njit, parallel_kernel


@njit(cache=True, inline="always")
def _logsumexp(values):
    m = values.max()
    if m == -np.inf:
        return m
    s = 0.0
    for v in values:
        s += math.exp(v - m)
    return m + math.log(s)


@parallel_kernel
def viterbi(emission, start, stop, trans, lengths, scores, paths):
    """``scores[b]``: the best path's score over the first ``lengths[b]`` steps; ``paths[b, :L]`` the
    path (first maximum on ties), the rest of the row left as given."""
    tags = emission.shape[2]
    for b in prange(emission.shape[0]):
        steps = lengths[b]
        # per-entry tables sized by the entry's length: a fixed-size scratch array allocated here
        # would be hoisted out of the parallel loop by Numba and shared between threads
        back = np.zeros((steps, tags), dtype=np.int64)
        delta = np.empty((steps, tags))
        for j in range(tags):
            delta[0, j] = start[j] + emission[b, 0, j]
        for t in range(1, steps):
            for j in range(tags):
                best, arg = -np.inf, 0
                for i in range(tags):
                    v = delta[t - 1, i] + trans[i, j]
                    if v > best:
                        best, arg = v, i
                delta[t, j] = best + emission[b, t, j]
                back[t, j] = arg
        tag, best = 0, -np.inf
        for j in range(tags):
            if delta[steps - 1, j] + stop[j] > best:
                tag, best = j, delta[steps - 1, j] + stop[j]
        scores[b] = best
        for t in range(steps - 1, -1, -1):
            paths[b, t] = tag
            tag = back[t, tag]


@parallel_kernel
def crf_nll(emission, start, stop, trans, labels, lengths, want_grad, loss, g_emission, g_weights):
    """``loss[b] = log Z - score(labels[b])`` over the first ``lengths[b]`` steps. With ``want_grad``,
    ``g_emission[b]`` = node marginals - one-hot labels (0 past the length) and ``g_weights[b]`` the
    same for the layout ``[start; stop; trans]`` (rows 0, 1, then one row per previous tag)."""
    tags = emission.shape[2]
    for b in prange(emission.shape[0]):
        steps = lengths[b]
        em = emission[b]
        y = labels[b]
        alpha = np.empty((steps, tags))
        alpha[0] = start + em[0]
        column = np.empty(steps + tags)[:tags]  # length-dependent, so Numba keeps it per thread (see viterbi)
        for t in range(1, steps):
            for j in range(tags):
                for i in range(tags):
                    column[i] = alpha[t - 1, i] + trans[i, j]
                alpha[t, j] = _logsumexp(column) + em[t, j]
        for j in range(tags):
            column[j] = alpha[steps - 1, j] + stop[j]
        log_z = _logsumexp(column)
        gold = start[y[0]] + stop[y[steps - 1]] + em[0, y[0]]
        for t in range(1, steps):
            gold += em[t, y[t]] + trans[y[t - 1], y[t]]
        loss[b] = log_z - gold
        if not want_grad:
            continue
        beta = np.empty((steps, tags))
        beta[steps - 1] = stop
        for t in range(steps - 2, -1, -1):
            for i in range(tags):
                for j in range(tags):
                    column[j] = trans[i, j] + em[t + 1, j] + beta[t + 1, j]
                beta[t, i] = _logsumexp(column)
        g_emission[b] = 0.0
        g_weights[b] = 0.0
        for t in range(steps):
            for j in range(tags):
                g_emission[b, t, j] = math.exp(alpha[t, j] + beta[t, j] - log_z)
            if t > 0:
                for i in range(tags):
                    for j in range(tags):
                        g_weights[b, 2 + i, j] += math.exp(
                            alpha[t - 1, i] + trans[i, j] + em[t, j] + beta[t, j] - log_z
                        )
                g_weights[b, 2 + y[t - 1], y[t]] -= 1.0
            g_emission[b, t, y[t]] -= 1.0
        g_weights[b, 0] = g_emission[b, 0]
        for j in range(tags):
            g_weights[b, 1, j] = math.exp(alpha[steps - 1, j] + stop[j] - log_z)
        g_weights[b, 1, y[steps - 1]] -= 1.0
