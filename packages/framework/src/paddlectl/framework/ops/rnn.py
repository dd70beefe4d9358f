"""Recurrent layers as one op per layer and direction: the whole sequence runs in one forward
call and one backward (BPTT) call, so the tape holds one node, not one per time step.

Gate layouts follow Paddle: LSTM [i, f, g, o], GRU [r, z, c] (reset applied after the hidden
matmul), SimpleRNN a single tanh/relu gate. Inputs are batch-major [B, T, I]; ``mask`` [B, T]
(from sequence lengths) freezes the state and zeroes the output past each sequence's end.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1)  # overflow-free logistic


def _step_forward(cell: str, xg: np.ndarray, hg: np.ndarray, h: np.ndarray, c: np.ndarray | None):
    """One time step from precomputed input gates ``xg`` and hidden gates ``hg``; returns (h, c, cache)."""
    if cell == "lstm":
        a = xg + hg
        H = h.shape[1]
        s = _sigmoid(a)  # one pass over all four gates; the g slice of it goes unused
        i, f, o = s[:, :H], s[:, H : 2 * H], s[:, 3 * H :]
        g = np.tanh(a[:, 2 * H : 3 * H])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        return o * tc, c_new, (i, f, g, o, tc)
    if cell == "gru":
        H = h.shape[1]
        r = _sigmoid(xg[:, :H] + hg[:, :H])
        z = _sigmoid(xg[:, H : 2 * H] + hg[:, H : 2 * H])
        cand = np.tanh(xg[:, 2 * H :] + r * hg[:, 2 * H :])
        return (h - cand) * z + cand, None, (r, z, cand, hg[:, 2 * H :])
    a = xg + hg
    out = np.tanh(a) if cell == "rnn_tanh" else np.maximum(a, 0)
    return out, None, (out,)


def _step_backward(cell: str, dh: np.ndarray, dc, cache, h_prev, c_prev):
    """Gradients of one step: (d input-gates, d hidden-gates, dh_prev contribution, dc_prev)."""
    if cell == "lstm":
        i, f, g, o, tc = cache
        dc_new = dc + dh * o * (1 - tc * tc)
        da = np.concatenate(
            [dc_new * g * i * (1 - i), dc_new * c_prev * f * (1 - f), dc_new * i * (1 - g * g), dh * tc * o * (1 - o)],
            axis=1,
        )
        return da, da, 0, dc_new * f
    if cell == "gru":
        r, z, cand, h_c = cache
        d_cand = dh * (1 - z) * (1 - cand * cand)
        dz = dh * (h_prev - cand) * z * (1 - z)
        dr = d_cand * h_c * r * (1 - r)
        dxg = np.concatenate([dr, dz, d_cand], axis=1)
        dhg = np.concatenate([dr, dz, d_cand * r], axis=1)
        return dxg, dhg, dh * z, None
    (out,) = cache
    da = dh * ((1 - out * out) if cell == "rnn_tanh" else (out > 0))
    return da, da, 0, None


def _rnn_forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    B, T, _ = x.shape
    xg_all = np.matmul(x, w_ih.T)
    if b_ih is not None:
        xg_all += b_ih
    h = h0
    c = c0
    ys = np.zeros((B, T, h0.shape[1]), dtype=x.dtype)
    caches, states = [], []
    steps = range(T - 1, -1, -1) if reverse else range(T)
    for t in steps:
        hg = h @ w_hh.T
        if b_hh is not None:
            hg = hg + b_hh
        h_new, c_new, cache = _step_forward(cell, xg_all[:, t], hg, h, c)
        states.append((h, c))
        caches.append(cache)
        if mask is not None:
            m = mask[:, t : t + 1]
            ys[:, t] = h_new * m
            h = m * h_new + (1 - m) * h
            c = None if c_new is None else m * c_new + (1 - m) * c
        else:
            ys[:, t] = h_new
            h, c = h_new, c_new
    ctx.save(x, w_ih, w_hh, caches, states, list(steps))
    outputs = (ys, h) if c is None else (ys, h, c)
    return outputs


def _rnn_vjp(ctx, dys, dh_last, dc_last=None):
    x, w_ih, w_hh, caches, states, steps = ctx.saved
    cell, mask = ctx.attrs["cell"], ctx.mask
    B, T, _ = x.shape
    G, H = w_hh.shape
    dxg_all = np.zeros((B, T, G), dtype=x.dtype)
    # Per-step hidden-gate gradients and the states they multiply, so the weight gradient is
    # one large GEMM after the loop instead of T small ones inside it.
    dhg_all = np.empty((len(steps), B, G), dtype=x.dtype)
    h_prev_all = np.empty((len(steps), B, H), dtype=x.dtype)
    dh = dh_last.copy()
    dc = None if dc_last is None else dc_last.copy()
    for k in range(len(steps) - 1, -1, -1):
        t = steps[k]
        h_prev, c_prev = states[k]
        m = None if mask is None else mask[:, t : t + 1]
        dh_new = dys[:, t] + dh if m is None else m * (dys[:, t] + dh)
        dc_new = dc if (dc is None or m is None) else m * dc
        dxg, dhg, dh_direct, dc_prev = _step_backward(cell, dh_new, dc_new, caches[k], h_prev, c_prev)
        dxg_all[:, t] = dxg
        dhg_all[k] = dhg
        h_prev_all[k] = h_prev
        carried = dhg @ w_hh + dh_direct
        dh = carried if m is None else carried + (1 - m) * dh
        if dc is not None:
            dc = dc_prev if m is None else dc_prev + (1 - m) * dc
    needs = ctx.needs_input_grad
    flat_dxg = dxg_all.reshape(-1, G)
    dx = (flat_dxg @ w_ih).reshape(x.shape) if needs[0] else None
    dw_ih = flat_dxg.T @ x.reshape(-1, x.shape[2]) if needs[1] else None
    db_ih = flat_dxg.sum(axis=0) if needs[3] else None
    flat_dhg = dhg_all.reshape(-1, G)
    dw_hh = flat_dhg.T @ h_prev_all.reshape(-1, H) if needs[2] else None
    db_hh = flat_dhg.sum(axis=0) if needs[4] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh, dh if needs[5] else None, dc if needs[6] else None, None


def _forward_with_mask(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    ctx.mask = mask
    return _rnn_forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell, reverse)


def _rnn_infer(x: Spec, w_ih: Spec, w_hh: Spec, b_ih, b_hh, h0: Spec, c0, mask, cell, reverse=False):
    B, T = x.shape[0], x.shape[1]
    H = w_hh.shape[1]
    y = Spec((B, T, H), x.dtype)
    state = Spec((B, H), x.dtype)
    return (y, state, state) if cell == "lstm" else (y, state)


rnn_layer_op = OpDef("rnn_layer", _forward_with_mask, _rnn_vjp, _rnn_infer, OPAQUE)


def rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0=None, mask=None, cell: str = "lstm", reverse: bool = False):
    """Run one recurrent layer in one direction over a batch-major sequence.

    Returns (outputs [B, T, H], last hidden [B, H]) and, for LSTM, the last cell state.
    """
    if cell not in GATES:
        raise ValueError(f"rnn_layer: cell must be one of {sorted(GATES)}, got {cell!r}")
    return rnn_layer_op(x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell=cell, reverse=bool(reverse))
