"""The ONNX export rule of ``rnn_layer`` (one recurrent layer in one direction), stored in its record.

ONNX's LSTM/GRU/RNN nodes are time-major with a direction axis and order their gates differently
(LSTM i,o,f,c against Paddle's i,f,g,o; GRU z,r,h against r,z,c), so the emitter transposes the
sequence, reorders the weight rows with Split + Concat (folded by any ONNX optimiser, and exact),
and turns the [B, T] mask into ``sequence_lens``. Paddle's GRU applies the reset gate after the
hidden matmul: ONNX's ``linear_before_reset=1``. Shared with the importer: ``GATE_ORDER``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConversionError
from .emitters import emits

ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}
# GATE_ORDER[cell][k]: the Paddle gate at ONNX position k.
GATE_ORDER = {"lstm": (0, 3, 1, 2), "gru": (1, 0, 2), "rnn_tanh": (0,), "rnn_relu": (0,)}


def paddle_order(cell: str) -> tuple:
    """The ONNX gate at Paddle position k: the inverse permutation of ``GATE_ORDER[cell]``."""
    order = GATE_ORDER[cell]
    return tuple(order.index(k) for k in range(len(order)))


def _axes(e, *axes: int) -> str:
    return e.const(np.array(axes, np.int64), "axes")


def _onnx_gates(e, name: str, cell: str) -> str:
    """Paddle's gate rows of ``name`` (a weight or bias) in ONNX's order."""
    order = GATE_ORDER[cell]
    if len(order) == 1:
        return name
    counted = {"num_outputs": len(order)} if e.opset >= 18 else {}  # opset 18: Split says how many parts
    parts = e.node("Split", [name], [e.fresh("gate") for _ in order], axis=0, **counted)
    return e.node("Concat", [parts[k] for k in order], axis=0)[0]


@emits("rnn_layer")
def _rnn_layer(e, op, ins, out, cell, reverse=False):
    if e.program.uses(op.outputs[-1]):
        raise ConversionError("rnn_layer: the reserve output (kept for training's backward) has no ONNX form")
    x, w_ih, w_hh, b_ih, b_hh, h0, c0, mask = ins
    gates, hidden = op.inputs[2].shape
    dtype = op.inputs[0].dtype
    zeros = None
    if not (b_ih and b_hh) and (b_ih or b_hh):
        zeros = e.const(np.zeros(gates, dtype), "zero_bias")
    bias = ""
    if b_ih or b_hh:
        halves = [_onnx_gates(e, b or zeros, cell) for b in (b_ih, b_hh)]
        bias = e.node("Unsqueeze", [e.node("Concat", halves, axis=0)[0], _axes(e, 0)])[0]
    lens = ""
    if mask:
        total = e.node("ReduceSum", [mask, _axes(e, 1)], keepdims=0)[0]
        lens = e.node("Cast", [total], to=e.dtype_code(np.int32))[0]
    w, r = (e.node("Unsqueeze", [_onnx_gates(e, m, cell), _axes(e, 0)])[0] for m in (w_ih, w_hh))
    states = [e.node("Unsqueeze", [s, _axes(e, 0)])[0] if s else "" for s in (h0, c0)]
    inputs = [e.node("Transpose", [x], perm=[1, 0, 2])[0], w, r, bias, lens, states[0]]
    attrs = {"hidden_size": int(hidden), "direction": "reverse" if reverse else "forward"}
    if cell == "lstm":
        inputs.append(states[1])
    elif cell == "gru":
        attrs["linear_before_reset"] = 1
    elif cell == "rnn_relu":
        attrs["activations"] = ["Relu"]
    while inputs[-1] == "":
        inputs.pop()
    n_states = 2 if cell == "lstm" else 1
    results = e.node(ONNX_OP[cell], inputs, [e.fresh("y")] + [e.fresh("state") for _ in range(n_states)], **attrs)
    time_major = e.node("Squeeze", [results[0], _axes(e, 1)])[0]
    e.node("Transpose", [time_major], [out[0]], perm=[1, 0, 2])
    for state, name in zip(results[1:], out[1:-1], strict=True):
        e.node("Squeeze", [state, _axes(e, 0)], [name])
