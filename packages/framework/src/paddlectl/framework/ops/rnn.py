"""Recurrent layers as one op per layer and direction: the whole sequence runs in one forward
call and one backward (BPTT) call, so the tape holds one node, not one per time step.

Gate layouts follow Paddle: LSTM [i, f, g, o], GRU [r, z, c] (reset applied after the hidden
matmul), SimpleRNN a single tanh/relu gate. Inputs are batch-major [B, T, I]; ``mask`` [B, T]
(from sequence lengths) freezes the state and zeroes the output past each sequence's end. An
absent initial state (``h0``/``c0`` None) is zeros, made inside the op: a traced program then holds
no batch-sized constant, so its batch dim stays symbolic.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Spec
from ..kernels import rnn as kernels

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _slots(t: int, reverse: bool) -> tuple[int, int]:
    """Where step t reads its old state and writes its new one in the [B, T + 1, H] state arrays."""
    return (t + 1, t) if reverse else (t, t + 1)


def _rnn_forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    B, T, _ = x.shape
    G, H = w_hh.shape
    dtype = x.dtype
    # The input projection of every step as one 2-D GEMM (a 3-D matmul is B small ones, 4x slower);
    # the biases are added in the step kernels.
    xg = (x.reshape(B * T, x.shape[2]) @ w_ih.T).reshape(B, T, G)
    b_ih, b_hh = (np.zeros(G, dtype) if b is None else np.ascontiguousarray(b) for b in (b_ih, b_hh))
    mask = np.ones((B, T), dtype) if mask is None else np.ascontiguousarray(mask, dtype)
    w_hh_t = np.ascontiguousarray(w_hh.T)  # BLAS runs the per-step matmul faster on this layout
    first = T if reverse else 0
    hs = np.empty((B, T + 1, H), dtype)
    hs[:, first] = 0 if h0 is None else h0
    ys = np.empty((B, T, H), dtype)
    gates = np.empty((B, T, G), dtype)
    cs = aux = None
    if cell == "lstm":
        cs = np.empty_like(hs)
        cs[:, first] = 0 if c0 is None else c0
        aux = np.empty_like(ys)
    elif cell == "gru":
        aux = np.empty_like(ys)
    hg = np.empty((B, G), dtype)
    kind = kernels.RELU if cell == "rnn_relu" else kernels.TANH
    for t in range(T - 1, -1, -1) if reverse else range(T):
        src, dst = _slots(t, reverse)
        np.matmul(hs[:, src], w_hh_t, out=hg)
        if cell == "lstm":
            kernels.lstm_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, cs, ys, gates, aux)
        elif cell == "gru":
            kernels.gru_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, aux)
        else:
            kernels.rnn_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, kind)
    ctx.save(x, w_ih, w_hh, mask, hs, cs, gates, aux)
    last = 0 if reverse else T
    if cs is None:
        return ys, hs[:, last].copy()
    return ys, hs[:, last].copy(), cs[:, last].copy()


def _rnn_vjp(ctx, dys, dh_last, dc_last=None):
    x, w_ih, w_hh, mask, hs, cs, gates, aux = ctx.saved
    cell, reverse = ctx.attrs["cell"], ctx.attrs.get("reverse", False)
    B, T, _ = x.shape
    G, H = w_hh.shape
    dtype = x.dtype
    dys = np.ascontiguousarray(dys, dtype)
    dh = np.array(dh_last, dtype)  # a fresh copy: the kernels update it in place
    dc = None if dc_last is None else np.array(dc_last, dtype)
    carried = np.zeros((B, H), dtype)  # the previous step's dgates @ W_hh
    dxg = np.empty((B, T, G), dtype)
    # GRU's hidden-gate gradients differ from the input-gate ones; LSTM's and RNN's are equal.
    dhg = np.empty_like(dxg) if cell == "gru" else dxg
    kind = kernels.RELU if cell == "rnn_relu" else kernels.TANH
    needs = ctx.needs_input_grad
    steps = range(T) if reverse else range(T - 1, -1, -1)
    for t in steps:
        src, _ = _slots(t, reverse)
        if cell == "lstm":
            kernels.lstm_backward_step(t, src, dys, carried, dh, dc, mask, cs, gates, aux, dxg)
        elif cell == "gru":
            kernels.gru_backward_step(t, src, dys, carried, dh, mask, hs, gates, aux, dxg, dhg)
        else:
            kernels.rnn_backward_step(t, dys, carried, dh, mask, gates, dxg, kind)
        if t != steps[-1] or needs[5]:  # the last product would only feed dh0
            np.matmul(dhg[:, t], w_hh, out=carried)
    # The weight gradients as one large GEMM each over all steps, not T small ones.
    flat_dxg = dxg.reshape(-1, G)
    dx = (flat_dxg @ w_ih).reshape(x.shape) if needs[0] else None
    dw_ih = flat_dxg.T @ x.reshape(-1, x.shape[2]) if needs[1] else None
    db_ih = flat_dxg.sum(axis=0) if needs[3] else None
    flat_dhg = dhg.reshape(-1, G)
    h_prev = hs[:, 1:] if reverse else hs[:, :T]  # the state each step read, at [b, t]
    dw_hh = flat_dhg.T @ h_prev.reshape(-1, H) if needs[2] else None
    db_hh = None
    if needs[4]:  # for LSTM and RNN the same sum as db_ih
        db_hh = db_ih.copy() if dhg is dxg and db_ih is not None else flat_dhg.sum(axis=0)
    dh0 = carried + dh if needs[5] else None
    return dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc if needs[6] else None, None


def _rnn_infer(x: Spec, w_ih: Spec, w_hh: Spec, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    B, T = x.shape[0], x.shape[1]
    H = w_hh.shape[1]
    y = Spec((B, T, H), x.dtype)
    state = Spec((B, H), x.dtype)
    return (y, state, state) if cell == "lstm" else (y, state)


rnn_layer_op = OpDef("rnn_layer", _rnn_forward, _rnn_vjp, _rnn_infer, OPAQUE)


def rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0=None, c0=None, mask=None, cell: str = "lstm", reverse: bool = False):
    """Run one recurrent layer in one direction over a batch-major sequence, from ``h0`` (and for
    LSTM ``c0``) [B, H], zeros where None.

    Returns (outputs [B, T, H], last hidden [B, H]) and, for LSTM, the last cell state.
    """
    if cell not in GATES:
        raise ValueError(f"rnn_layer: cell must be one of {sorted(GATES)}, got {cell!r}")
    return rnn_layer_op(x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell=cell, reverse=bool(reverse))
