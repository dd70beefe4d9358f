"""Recurrent layers as one op per layer and direction: the whole sequence runs in one forward
call and one backward (BPTT) call, so the tape holds one node, not one per time step.

Gate layouts follow Paddle: LSTM [i, f, g, o], GRU [r, z, c] (reset applied after the hidden
matmul), SimpleRNN a single tanh/relu gate. Inputs are batch-major [B, T, I]; ``mask`` [B, T]
(from sequence lengths) freezes the state and zeroes the output past each sequence's end. An
absent initial state (``h0``/``c0`` None) is zeros, made inside the op: a traced program then holds
no batch-sized constant, so its batch dim stays symbolic.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..core import symbolic
from ..core.autograd import is_grad_enabled
from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..kernels import blas, gemm
from ..kernels import rnn as kernels
from ..kernels.blas import matmul
from ..kernels.conv_select import product_threads
from ._util import constant
from .shape import unsqueeze

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


_CELLS = {"lstm": kernels.LSTM, "gru": kernels.GRU}
"""The whole-sequence kernels' cell codes (the SimpleRNNs: ``kernels.SIMPLE``)."""


def _slots(t: int, reverse: bool) -> tuple[int, int]:
    """Where step t reads its old state and writes its new one in the [B, T + 1, H] state arrays."""
    return (t + 1, t) if reverse else (t, t + 1)


def _reserve_parts(cell: str, B: int, T: int, G: int, H: int) -> list[tuple[str, tuple]]:
    """The forward intermediates BPTT reads, in their order inside the flat ``reserve`` output."""
    parts = [("hs", (B, symbolic.add(T, 1), H))]
    if cell == "lstm":
        parts.append(("cs", (B, symbolic.add(T, 1), H)))
    parts.append(("gates", (B, T, G)))
    if cell in ("lstm", "gru"):
        parts.append(("aux", (B, T, H)))
    return parts


def _unpack(reserve: np.ndarray, cell: str, B: int, T: int, G: int, H: int) -> dict[str, np.ndarray]:
    """Views of the intermediates inside ``reserve`` (no copies): the kernels write and read them there."""
    views, start = {}, 0
    for name, shape in _reserve_parts(cell, B, T, G, H):
        size = math.prod(shape)
        views[name] = reserve[start : start + size].reshape(shape)
        start += size
    return views


def _ones_mask(mask, B: int, T: int, dtype) -> np.ndarray:
    return np.ones((B, T), dtype) if mask is None else np.ascontiguousarray(mask, dtype)


def _rnn_forward(ctx, x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    """(outputs, last hidden[, last cell], reserve): ``reserve`` holds the states, gates and
    activations BPTT reads, as bytes (as Paddle's rnn op's Reserve output: not a value to
    differentiate), so backward reads only outputs."""
    B, T, _ = x.shape
    G, H = w_hh.shape
    dtype = x.dtype
    # The input projection of every step as one 2-D GEMM (a 3-D matmul is B small ones, 4x slower);
    # the biases are added in the step kernels.
    xg = matmul(x.reshape(B * T, x.shape[2]), w_ih.T).reshape(B, T, G)
    b_ih, b_hh = (np.zeros(G, dtype) if b is None else np.ascontiguousarray(b) for b in (b_ih, b_hh))
    mask = _ones_mask(mask, B, T, dtype)
    first = T if reverse else 0
    parts = _reserve_parts(cell, B, T, G, H)
    reserve = np.empty(sum(math.prod(shape) for _, shape in parts) * dtype.itemsize, np.uint8)
    v = _unpack(reserve.view(dtype), cell, B, T, G, H)
    hs, cs, gates, aux = v["hs"], v.get("cs"), v["gates"], v.get("aux")
    hs[:, first] = 0 if h0 is None else h0
    ys = np.empty((B, T, H), dtype)
    if cell == "lstm":
        cs[:, first] = 0 if c0 is None else c0
    hg = np.empty((B, G), dtype)
    kind = kernels.RELU if cell == "rnn_relu" else kernels.TANH
    if dtype == np.float32:
        blocks = _row_blocks(B, T, G, H)
        kernels.forward_sequence.run(
            blocks > 1, blocks, _CELLS.get(cell, kernels.SIMPLE), kind, reverse, xg, b_ih, gemm.pack(w_hh.T), b_hh,
            mask, hs, hs if cs is None else cs, ys, gates, ys if aux is None else aux, hg,
        )  # fmt: skip
    else:
        _step_loop(cell, kind, reverse, xg, b_ih, w_hh, b_hh, mask, hs, cs, ys, gates, aux, hg)
    last = 0 if reverse else T
    if cs is None:
        return ys, hs[:, last].copy(), reserve
    return ys, hs[:, last].copy(), cs[:, last].copy(), reserve


def _row_blocks(B: int, T: int, G: int, H: int) -> int:
    """Row blocks the float32 sequence kernels run side by side: one per thread of
    ``product_threads`` for the sequence's products, at most one per row. Any split gives the same
    results (each row's recurrence is its own)."""
    return min(product_threads(B * T * G * H), B)


def _step_loop(cell, kind, reverse, xg, b_ih, w_hh, b_hh, mask, hs, cs, ys, gates, aux, hg):
    """The forward's time loop step by step, with NumPy's products (the float64 path)."""
    B, T, G = xg.shape
    H = hs.shape[2]
    w_hh_t = np.ascontiguousarray(w_hh.T)  # BLAS runs the per-step matmul faster on this layout
    with _step_blas(B, G, H):
        for t in range(T - 1, -1, -1) if reverse else range(T):
            src, dst = _slots(t, reverse)
            np.matmul(hs[:, src], w_hh_t, out=hg)
            if cell == "lstm":
                kernels.lstm_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, cs, ys, gates, aux, 0, B)
            elif cell == "gru":
                kernels.gru_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, aux, 0, B)
            else:
                kernels.rnn_forward_step(t, src, dst, xg, b_ih, hg, b_hh, mask, hs, ys, gates, kind, 0, B)


@contextlib.contextmanager
def _step_blas(B, G, H):
    """The time loop's per-step products ([B, H] x [H, G]) on one BLAS thread when they are small
    (``blas.SMALL_GEMM_MACS``), as ``blas.matmul`` runs such products: two threads sum them in
    another order, and beside a busy process a second thread waits for a core at every step."""
    small = B * G * H < blas.SMALL_GEMM_MACS
    if small:
        blas.BLAS_CAP.enter(1)
    try:
        yield
    finally:
        if small:
            blas.BLAS_CAP.exit()


def _rnn_grad_forward(ctx, x, w_ih, w_hh, mask, reserve, dys, dh_last, dc_last, cell, reverse, needs):
    """BPTT over the forward's reserve: the gradients of (x, w_ih, w_hh, b_ih, b_hh, h0, c0), an
    empty array for each input ``needs`` says no to."""
    B, T, _ = x.shape
    G, H = w_hh.shape
    dtype = x.dtype
    mask = _ones_mask(mask, B, T, dtype)
    v = _unpack(reserve.view(dtype), cell, B, T, G, H)
    hs, cs, gates, aux = v["hs"], v.get("cs"), v["gates"], v.get("aux")
    dys = np.ascontiguousarray(dys, dtype)
    dh = np.array(dh_last, dtype)  # a fresh copy: the kernels update it in place
    dc = None if dc_last is None else np.array(dc_last, dtype)
    carried = np.zeros((B, H), dtype)  # the previous step's dgates @ W_hh
    dxg = np.empty((B, T, G), dtype)
    # GRU's hidden-gate gradients differ from the input-gate ones; LSTM's and RNN's are equal.
    dhg = np.empty_like(dxg) if cell == "gru" else dxg
    kind = kernels.RELU if cell == "rnn_relu" else kernels.TANH
    if dtype == np.float32:
        blocks = _row_blocks(B, T, G, H)
        kernels.backward_sequence.run(
            blocks > 1, blocks, _CELLS.get(cell, kernels.SIMPLE), kind, reverse, dys, carried, dh,
            dh if dc is None else dc, mask, hs, hs if cs is None else cs, gates, gates if aux is None else aux, dxg, dhg,
            gemm.pack(w_hh), bool(needs[5]),
        )  # fmt: skip
    else:
        _bptt_loop(cell, kind, reverse, dys, carried, dh, dc, mask, hs, cs, gates, aux, dxg, dhg, w_hh, needs[5])
    empty = np.empty(0, dtype)
    # The weight gradients as one large GEMM each over all steps, not T small ones.
    flat_dxg = dxg.reshape(-1, G)
    dx = matmul(flat_dxg, w_ih).reshape(x.shape) if needs[0] else empty
    dw_ih = matmul(flat_dxg.T, x.reshape(-1, x.shape[2])) if needs[1] else empty
    db_ih = flat_dxg.sum(axis=0) if needs[3] else empty
    flat_dhg = dhg.reshape(-1, G)
    h_prev = hs[:, 1:] if reverse else hs[:, :T]  # the state each step read, at [b, t]
    dw_hh = matmul(flat_dhg.T, h_prev.reshape(-1, H)) if needs[2] else empty
    db_hh = empty
    if needs[4]:  # for LSTM and RNN the same sum as db_ih
        db_hh = db_ih.copy() if dhg is dxg and needs[3] else flat_dhg.sum(axis=0)
    dh0 = carried + dh if needs[5] else empty
    return dx, dw_ih, dw_hh, db_ih, db_hh, dh0, dc if needs[6] and dc is not None else empty


def _bptt_loop(cell, kind, reverse, dys, carried, dh, dc, mask, hs, cs, gates, aux, dxg, dhg, w_hh, last):
    """BPTT's time loop step by step, with NumPy's products (the float64 path)."""
    B, T, G = dxg.shape
    steps = range(T) if reverse else range(T - 1, -1, -1)
    with _step_blas(B, G, hs.shape[2]):
        for t in steps:
            src, _ = _slots(t, reverse)
            if cell == "lstm":
                kernels.lstm_backward_step(t, src, dys, carried, dh, dc, mask, cs, gates, aux, dxg, 0, B)
            elif cell == "gru":
                kernels.gru_backward_step(t, src, dys, carried, dh, mask, hs, gates, aux, dxg, dhg, 0, B)
            else:
                kernels.rnn_backward_step(t, dys, carried, dh, mask, gates, dxg, kind, 0, B)
            if t != steps[-1] or last:  # the last product would only feed dh0
                np.matmul(dhg[:, t], w_hh, out=carried)


def _rnn_vjp(ctx, *grads):
    """BPTT by the step kernels (``rnn_layer_grad``); it has no derivative of its own."""
    if is_grad_enabled():
        raise RuntimeError(
            "paddle.grad(create_graph=True): a recurrent layer's gradient (BPTT by fused step kernels) cannot be "
            "differentiated again; differentiate it once"
        )
    cell = ctx.attrs["cell"]
    dys, dh_last = grads[0], grads[1]
    dc_last = grads[2] if cell == "lstm" else None
    needs = tuple(bool(n) for n in ctx.needs_input_grad[:7])
    x, w_ih, w_hh, mask = ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(7)
    reserve = ctx.output(len(grads) - 1)
    out = rnn_layer_grad_op(
        x, w_ih, w_hh, mask, reserve, dys, dh_last, dc_last, cell=cell, reverse=ctx.attrs.get("reverse", False),
        needs=needs,
    )  # fmt: skip
    return (*(g if need else None for g, need in zip(out, needs, strict=True)), None)


def _rnn_infer(x: Spec, w_ih: Spec, w_hh: Spec, b_ih, b_hh, h0, c0, mask, cell, reverse=False):
    B, T = x.shape[0], x.shape[1]
    G, H = w_hh.shape
    y = Spec((B, T, H), x.dtype)
    state = Spec((B, H), x.dtype)
    sizes = [symbolic.product(shape) for _, shape in _reserve_parts(cell, B, T, G, H)]
    reserve = Spec((symbolic.simplify(symbolic.mul(symbolic.add(*sizes), np.dtype(x.dtype).itemsize)),), np.uint8)
    return (y, state, state, reserve) if cell == "lstm" else (y, state, reserve)


def _rnn_grad_infer(x: Spec, w_ih: Spec, w_hh: Spec, mask, reserve, dys, dh_last, dc_last, cell, reverse, needs):
    b_ih = Spec((w_hh.shape[0],), x.dtype)
    state = Spec((x.shape[0], w_hh.shape[1]), x.dtype)
    full = (x, w_ih, w_hh, b_ih, b_ih, state, state)
    return tuple(spec if need else Spec((0,), x.dtype) for spec, need in zip(full, needs, strict=True))


def _samples(rng):
    def call(cell, B=2, T=3, I=2, H=2, **extra):  # noqa: E741 - the input size
        G = GATES[cell] * H
        arrays = [rng.standard_normal(s) * 0.5 for s in ((B, T, I), (G, I), (G, H), (G,), (G,), (B, H))]
        c0 = rng.standard_normal((B, H)) * 0.5 if cell == "lstm" else None
        mask = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
        return Sample((*arrays, c0, mask), {"cell": cell, **extra})

    return [call("lstm"), call("gru", reverse=True), call("rnn_tanh"), call("rnn_relu")]


def _grad_samples(rng):
    B, T, I, H, G = 2, 3, 2, 2, 8  # noqa: E741 - the input size
    x, w_ih, w_hh = rng.standard_normal((B, T, I)), rng.standard_normal((G, I)), rng.standard_normal((G, H))
    size = 2 * B * (T + 1) * H + B * T * (G + H)
    reserve = rng.uniform(0.1, 0.9, size).view(np.uint8)
    dys, dh, dc = rng.standard_normal((B, T, H)), rng.standard_normal((B, H)), rng.standard_normal((B, H))
    needs = (True,) * 7
    return [Sample((x, w_ih, w_hh, None, reserve, dys, dh, dc), {"cell": "lstm", "reverse": False, "needs": needs})]


rnn_layer_op = OpDef(
    "rnn_layer",
    _rnn_forward,
    _rnn_vjp,
    _rnn_infer,
    OPAQUE,
    samples=_samples,
    exempt={"vjp2": "BPTT runs as fused step kernels (rnn_layer_grad), which have no derivative of their own"},
)
rnn_layer_grad_op = OpDef("rnn_layer_grad", _rnn_grad_forward, None, _rnn_grad_infer, OPAQUE, samples=_grad_samples)


def rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0=None, c0=None, mask=None, cell: str = "lstm", reverse: bool = False):
    """Run one recurrent layer in one direction over a batch-major sequence, from ``h0`` (and for
    LSTM ``c0``) [B, H], zeros where None.

    Returns (outputs [B, T, H], last hidden [B, H]) and, for LSTM, the last cell state.
    """
    if cell not in GATES:
        raise ValueError(f"rnn_layer: cell must be one of {sorted(GATES)}, got {cell!r}")
    return rnn_layer_op(x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask, cell=cell, reverse=bool(reverse))[:-1]


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """``mask[..., j] = j < x[...]`` for lengths ``x``, ``maxlen`` columns (default ``max(x)``): the
    [B, T] mask a recurrent layer takes from sequence lengths."""
    if maxlen is None:  # the column count from the lengths: a data-dependent shape, eager only
        maxlen = int(x.max().item()) if x.size else 0
    return (constant(np.arange(int(maxlen)), x.dtype) < unsqueeze(x, -1)).astype(dtype)


FUNCTIONAL = ["sequence_mask"]
