"""Fused time-step kernels for the recurrent cells; ops/rnn.py runs the loop over time.

A step is one small matmul ``h @ W_hh^T`` and elementwise work: hidden bias, gate
nonlinearities, state update, sequence mask, and saving what BPTT needs. Each step kernel here does
that elementwise part of one step in one call, where NumPy needed a dozen calls and temporaries.
For float32 ``forward_sequence`` / ``backward_sequence`` run the whole time loop in one call, the
products on ``gemm``'s packed-weight micro-kernel: per step, a Python-level BLAS call and a kernel
dispatch cost more than the [32, 128] x [128, 512] product itself (the train_step benchmark's LSTM
step 8.4 -> 7.2 ms); float64 keeps NumPy's BLAS step by step.

Arrays are batch-major like the op: ``xg`` (x @ W_ih^T, no bias)/``gates`` [B, T, G], ``ys``/``aux`` [B, T, H]; the
states ``hs``/``cs`` are [B, T + 1, H], slot ``src`` holding the state before step ``t`` and
``dst`` the one after, so the matmul input of every step stays saved for the weight gradient.
``mask`` [B, T] is 1 inside a sequence, 0 past its end (the state is frozen, the output zero).

The gate nonlinearities are ``fastmath``'s: at ~15 ns a scalar ``tanhf`` would make a step's
nonlinearities cost ten times its matmul.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import gemm, njit, parallel_kernel
from .fastmath import sigmoid, tanh

_F = np.float32
_ZERO, _ONE = _F(0.0), _F(1.0)


# Each step works row by row, in loops that store to one array over one gate block: a loop
# storing to several arrays needs more runtime alias checks than LLVM allows and stays scalar.
# One gate function per activation, not one with a switch: a switch costs each step kernel that
# inlines it ~0.4 s of compilation.

TANH, RELU = 0, 1  # SimpleRNN activations


@njit(cache=True, error_model="numpy")
def _sigmoid_gates(out, xg, b_ih, hg, b_hh, lo, hi):
    """out = sigmoid((xg + b_ih) + (hg + b_hh)) over [lo, hi)."""
    o, x, bi, h, bh = out[lo:hi], xg[lo:hi], b_ih[lo:hi], hg[lo:hi], b_hh[lo:hi]
    for j in range(o.size):
        o[j] = sigmoid((x[j] + bi[j]) + (h[j] + bh[j]))


@njit(cache=True, error_model="numpy")
def _tanh_gates(out, xg, b_ih, hg, b_hh, lo, hi):
    o, x, bi, h, bh = out[lo:hi], xg[lo:hi], b_ih[lo:hi], hg[lo:hi], b_hh[lo:hi]
    for j in range(o.size):
        o[j] = tanh((x[j] + bi[j]) + (h[j] + bh[j]))


@njit(cache=True)
def _relu_gates(out, xg, b_ih, hg, b_hh, lo, hi):
    o, x, bi, h, bh = out[lo:hi], xg[lo:hi], b_ih[lo:hi], hg[lo:hi], b_hh[lo:hi]
    for j in range(o.size):
        a = (x[j] + bi[j]) + (h[j] + bh[j])
        o[j] = _ZERO if a <= 0 else a  # NaN stays NaN


@njit(cache=True, error_model="numpy")
def _tanh_into(out, x):
    for j in range(out.size):
        out[j] = tanh(x[j])


@njit(cache=True)
def _copy(out, src):
    """out[:] = src as a plain loop: Numba's slice assignment takes seconds to compile."""
    for j in range(out.size):
        out[j] = src[j]


@njit(cache=True)
def _zero(out):
    for j in range(out.size):
        out[j] = 0


@njit(cache=True)
def _commit(hs, ys, b, t, src, dst, keep):
    """Row b's new state is already in ys[b, t]: keep it, or past the sequence end keep the old."""
    if keep:
        _copy(hs[b, dst], ys[b, t])
    else:
        _copy(hs[b, dst], hs[b, src])
        _zero(ys[b, t])


@njit(cache=True)
def _upstream(dh, carried, dys, mask, b, t):
    """dh[b] becomes the gradient reaching step t's new state (or, past the sequence's end, the old
    one); returns whether step t is inside the sequence."""
    keep = mask[b, t] != 0
    dh_row, c_row = dh[b], carried[b]
    if keep:
        dy = dys[b, t]
        for j in range(dh_row.size):
            dh_row[j] = dy[j] + (c_row[j] + dh_row[j])
    else:
        for j in range(dh_row.size):
            dh_row[j] = c_row[j] + dh_row[j]
    return keep


@njit(cache=True, error_model="numpy")
def lstm_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, cs, ys, gates, tcs, b0, b1):
    """One LSTM step (gates [i, f, g, o]) of rows b0..b1; saves the activated gates and tanh(c)."""
    H = hs.shape[2]
    for b in range(b0, b1):
        gr, x, h = gates[b, t], xg[b, t], hg[b]
        _sigmoid_gates(gr, x, b_ih, h, b_hh, 0, 2 * H)
        _tanh_gates(gr, x, b_ih, h, b_hh, 2 * H, 3 * H)
        _sigmoid_gates(gr, x, b_ih, h, b_hh, 3 * H, 4 * H)
        i, f, g, o = gr[:H], gr[H : 2 * H], gr[2 * H : 3 * H], gr[3 * H :]
        c_prev, c_new, tc, y = cs[b, src], cs[b, dst], tcs[b, t], ys[b, t]
        for j in range(H):
            c_new[j] = f[j] * c_prev[j] + i[j] * g[j]
        _tanh_into(tc, c_new)
        for j in range(H):
            y[j] = o[j] * tc[j]
        keep = mask[b, t] != 0
        if not keep:
            _copy(c_new, c_prev)
        _commit(hs, ys, b, t, src, dst, keep)


@njit(cache=True, error_model="numpy")
def lstm_backward_step(t, src, dys, carried, dh, dc, mask, cs, gates, tcs, dgates, b0, b1):
    """BPTT through one LSTM step: dgates[:, t]; dh, dc become the gradients of the old state
    except the part through W_hh (the caller's next ``carried = dgates[:, t] @ W_hh``); rows b0..b1."""
    H = dh.shape[1]
    for b in range(b0, b1):
        keep = _upstream(dh, carried, dys, mask, b, t)
        dg = dgates[b, t]
        if not keep:
            _zero(dg)
            continue
        gr, tc, c_prev, dh_row, dc_row = gates[b, t], tcs[b, t], cs[b, src], dh[b], dc[b]
        i, f, g, o = gr[:H], gr[H : 2 * H], gr[2 * H : 3 * H], gr[3 * H :]
        for j in range(H):
            dc_row[j] = dc_row[j] + dh_row[j] * o[j] * (_ONE - tc[j] * tc[j])
        di, df, dgg, do = dg[:H], dg[H : 2 * H], dg[2 * H : 3 * H], dg[3 * H :]
        for j in range(H):
            di[j] = dc_row[j] * g[j] * i[j] * (_ONE - i[j])
        for j in range(H):
            df[j] = dc_row[j] * c_prev[j] * f[j] * (_ONE - f[j])
        for j in range(H):
            dgg[j] = dc_row[j] * i[j] * (_ONE - g[j] * g[j])
        for j in range(H):
            do[j] = dh_row[j] * tc[j] * o[j] * (_ONE - o[j])
        for j in range(H):
            dc_row[j] = dc_row[j] * f[j]
        _zero(dh_row)


@njit(cache=True, error_model="numpy")
def gru_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, hcs, b0, b1):
    """One GRU step (gates [r, z, c], reset applied after the hidden matmul); saves the
    activated gates and the candidate's hidden part hc = (h @ W_hc^T + b_hc); rows b0..b1."""
    H = hs.shape[2]
    for b in range(b0, b1):
        gr, x, h, hc = gates[b, t], xg[b, t], hg[b], hcs[b, t]
        _sigmoid_gates(gr, x, b_ih, h, b_hh, 0, 2 * H)
        hh, bhc = h[2 * H :], b_hh[2 * H :]
        for j in range(H):
            hc[j] = hh[j] + bhc[j]
        r, z, cand, xc, bic = gr[:H], gr[H : 2 * H], gr[2 * H :], x[2 * H :], b_ih[2 * H :]
        for j in range(H):
            cand[j] = tanh((xc[j] + bic[j]) + r[j] * hc[j])
        h_prev, y = hs[b, src], ys[b, t]
        for j in range(H):
            y[j] = (h_prev[j] - cand[j]) * z[j] + cand[j]
        _commit(hs, ys, b, t, src, dst, mask[b, t] != 0)


@njit(cache=True, error_model="numpy")
def gru_backward_step(t, src, dys, carried, dh, mask, hs, gates, hcs, dxg, dhg, b0, b1):
    """BPTT through one GRU step: input-gate and hidden-gate gradients (they differ in the
    candidate block, scaled by r on the hidden side); dh as in ``lstm_backward_step``."""
    H = dh.shape[1]
    for b in range(b0, b1):
        keep = _upstream(dh, carried, dys, mask, b, t)
        dx_row, dh_g = dxg[b, t], dhg[b, t]
        if not keep:
            _zero(dx_row)
            _zero(dh_g)
            continue
        gr, hc, h_prev, dh_row = gates[b, t], hcs[b, t], hs[b, src], dh[b]
        r, z, cand = gr[:H], gr[H : 2 * H], gr[2 * H :]
        dr, dz, dcand = dx_row[:H], dx_row[H : 2 * H], dx_row[2 * H :]
        for j in range(H):
            dcand[j] = dh_row[j] * (_ONE - z[j]) * (_ONE - cand[j] * cand[j])
        for j in range(H):
            dz[j] = dh_row[j] * (h_prev[j] - cand[j]) * z[j] * (_ONE - z[j])
        for j in range(H):
            dr[j] = dcand[j] * hc[j] * r[j] * (_ONE - r[j])
        _copy(dh_g[: 2 * H], dx_row[: 2 * H])
        dh_c = dh_g[2 * H :]
        for j in range(H):
            dh_c[j] = dcand[j] * r[j]
        for j in range(H):
            dh_row[j] = dh_row[j] * z[j]


@njit(cache=True, error_model="numpy")
def rnn_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, outs, kind, b0, b1):
    """One SimpleRNN step of rows b0..b1, activation TANH or RELU; saves the unmasked output."""
    for b in range(b0, b1):
        out = outs[b, t]
        if kind == TANH:
            _tanh_gates(out, xg[b, t], b_ih, hg[b], b_hh, 0, out.size)
        else:
            _relu_gates(out, xg[b, t], b_ih, hg[b], b_hh, 0, out.size)
        _copy(ys[b, t], out)
        _commit(hs, ys, b, t, src, dst, mask[b, t] != 0)


@njit(cache=True, error_model="numpy")
def rnn_backward_step(t, dys, carried, dh, mask, outs, dgates, kind, b0, b1):
    """BPTT through one SimpleRNN step; dh as in ``lstm_backward_step``."""
    for b in range(b0, b1):
        keep = _upstream(dh, carried, dys, mask, b, t)
        dg = dgates[b, t]
        if not keep:
            _zero(dg)
            continue
        out, dh_row = outs[b, t], dh[b]
        if kind == TANH:
            for j in range(dg.size):
                dg[j] = dh_row[j] * (_ONE - out[j] * out[j])
        else:
            for j in range(dg.size):
                dg[j] = dh_row[j] * (_ONE if out[j] > 0 else _ZERO)
        _zero(dh_row)


# ----- whole sequences (float32): the time loop and its products in one call -------------------
# A row's recurrence reads only its own earlier state, so a block of rows runs every step on its
# own: one parallel region per sequence, no barrier per step, and the same sums on any split.

LSTM, GRU, SIMPLE = 0, 1, 2


@njit(cache=True, error_model="numpy")
def _forward_rows(cell, kind, reverse, xg, b_ih, w_hh_packed, b_hh, mask, hs, cs, ys, gates, aux, hg, b0, b1):
    """Every step of the forward loop for rows b0..b1: ``hg = h @ W_hh^T`` on ``gemm``'s
    micro-kernel, then the cell's step kernel."""
    steps = xg.shape[1]
    for step in range(steps):
        t = steps - 1 - step if reverse else step
        src, dst = (t + 1, t) if reverse else (t, t + 1)
        gemm.product(hs[:, src], w_hh_packed, hg, b0, b1)
        if cell == LSTM:
            lstm_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, cs, ys, gates, aux, b0, b1)
        elif cell == GRU:
            gru_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, aux, b0, b1)
        else:
            rnn_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, kind, b0, b1)


@parallel_kernel
def forward_sequence(blocks, cell, kind, reverse, xg, b_ih, w_hh_packed, b_hh, mask, hs, cs, ys, gates, aux, hg):
    """``ops.rnn``'s forward loop, the batch split into ``blocks`` row blocks run side by side
    (``w_hh_packed = gemm.pack(W_hh^T)``). ``cs`` (GRU, SimpleRNN) and ``aux`` (SimpleRNN) are
    unused stand-ins of the same type where the cell has none."""
    rows = xg.shape[0]
    size = -(-rows // blocks)
    for block in prange(blocks):
        b0 = block * size
        _forward_rows(cell, kind, reverse, xg, b_ih, w_hh_packed, b_hh, mask, hs, cs, ys, gates, aux, hg, b0,
                      min(rows, b0 + size))  # fmt: skip


@njit(cache=True, error_model="numpy")
def _backward_rows(cell, kind, reverse, dys, carried, dh, dc, mask, hs, cs, gates, aux, dxg, dhg, w_hh_packed, last,
                   b0, b1):  # fmt: skip
    """Every step of the BPTT loop for rows b0..b1: the cell's backward step, then ``carried =
    dhg[:, t] @ W_hh``, the last step's product only if ``last`` (it feeds dh0 alone)."""
    steps = dys.shape[1]
    for step in range(steps):
        t = step if reverse else steps - 1 - step
        src = t + 1 if reverse else t
        if cell == LSTM:
            lstm_backward_step(t, src, dys, carried, dh, dc, mask, cs, gates, aux, dxg, b0, b1)
        elif cell == GRU:
            gru_backward_step(t, src, dys, carried, dh, mask, hs, gates, aux, dxg, dhg, b0, b1)
        else:
            rnn_backward_step(t, dys, carried, dh, mask, gates, dxg, kind, b0, b1)
        if step != steps - 1 or last:
            gemm.product(dhg[:, t], w_hh_packed, carried, b0, b1)


@parallel_kernel
def backward_sequence(blocks, cell, kind, reverse, dys, carried, dh, dc, mask, hs, cs, gates, aux, dxg, dhg,
                      w_hh_packed, last):  # fmt: skip
    """``ops.rnn``'s BPTT loop in ``blocks`` row blocks side by side (``w_hh_packed =
    gemm.pack(W_hh)``). Stand-ins as in ``forward_sequence`` (``dc`` for GRU and SimpleRNN)."""
    rows = dys.shape[0]
    size = -(-rows // blocks)
    for block in prange(blocks):
        b0 = block * size
        _backward_rows(cell, kind, reverse, dys, carried, dh, dc, mask, hs, cs, gates, aux, dxg, dhg, w_hh_packed,
                       last, b0, min(rows, b0 + size))  # fmt: skip
