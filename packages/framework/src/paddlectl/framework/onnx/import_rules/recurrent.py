"""Import rules for ONNX's LSTM, GRU and RNN onto the framework's ``rnn_layer`` (one op per direction).

The weights' gate rows are reordered to Paddle's (``rnn_emitter.GATE_ORDER``, the export rule's own
table, so the two directions of the round trip cannot disagree); ``sequence_lens`` becomes the [B, T]
mask the op freezes states and zeroes outputs with, as ONNX does past each sequence's end. What the
op does not compute is refused by name before anything is built: activations other than the
defaults (ReLU for RNN aside), cell clipping, LSTM's coupled input/forget gate and peepholes.
GRU's ``linear_before_reset=0`` (ONNX's default; Paddle's and PyTorch's GRU apply the reset after
the hidden matmul, as the op does) is unrolled over the time steps into matmuls and gates
(``_gru_reset_first``), so it needs a fixed sequence length.
"""

from __future__ import annotations

import numpy as np

from ...errors import ConversionError
from ...ops.rnn import GATES
from ..rnn_emitter import paddle_order
from .base import Rule, arg, dtype_of, item

_ALL = ["slice", None, None, None]
_DEFAULT_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}
_DIRECTIONS = {"forward": (False,), "reverse": (True,), "bidirectional": (False, True)}


def _activations(a: dict) -> list[str]:
    return [(s.decode() if isinstance(s, bytes) else s).lower() for s in a.get("activations", [])]


def _check(op_type: str):
    def check(a: dict, opset: int) -> list[str]:
        problems = []
        direction = a.get("direction", "forward")
        if direction not in _DIRECTIONS:
            problems.append(f"direction={direction!r}: expected one of {sorted(_DIRECTIONS)}")
        count = 2 if direction == "bidirectional" else 1
        allowed = [[], _DEFAULT_ACTIVATIONS[op_type] * count] + ([["relu"] * count] if op_type == "RNN" else [])
        if _activations(a) not in allowed:
            problems.append(
                f"activations={_activations(a)}: only the defaults {_DEFAULT_ACTIVATIONS[op_type]} per direction"
                + (" (or Relu)" if op_type == "RNN" else "")
                + " are supported"
            )
        if "clip" in a:
            problems.append(f"clip={a['clip']}: cell clipping is not supported")
        if a.get("input_forget", 0):
            problems.append("input_forget=1: the coupled input/forget gate is not supported")
        if a.get("layout", 0) not in (0, 1):
            problems.append(f"layout={a['layout']}: expected 0 (time-major) or 1 (batch-major)")
        return problems

    return check


def _gate_rows(b, src: str, direction: int, cell: str, hidden: int, offset: int = 0):
    """Direction ``direction`` of an ONNX W/R [D, G*H, .] or B [D, 2*G*H] with its rows in Paddle's
    gate order; ``offset`` picks B's recurrent half."""
    tail = [_ALL] if len(item(b, src).shape) == 3 else []
    parts = [
        b.op(
            "getitem",
            [src],
            spec=[["int", direction], ["slice", offset + k * hidden, offset + (k + 1) * hidden, None]] + tail,
        )[0]  # fmt: skip
        for k in paddle_order(cell)
    ]
    return parts[0] if len(parts) == 1 else b.op("concat", parts, axis=0)[0]


def _state(b, node, index: int, direction: int, layout: int):
    name = arg(node, index)
    if not name:
        return None
    spec = [["int", direction]] if layout == 0 else [_ALL, ["int", direction]]
    return b.op("getitem", [name], spec=spec)[0]


def _mask(b, node, x):
    """``sequence_lens`` [B] as the [B, T] float mask ``t < len``."""
    lens = arg(node, 4)
    if not lens:
        return None
    steps = item(b, x).shape[1]
    if not isinstance(steps, int):
        raise ConversionError(
            f"{b.where()}: sequence_lens with a symbolic sequence length {steps!r} is not supported; give the "
            "sequence a fixed length or drop sequence_lens"
        )
    (column,) = b.op("getitem", [lens], spec=[_ALL, ["none"]])
    (inside,) = b.op("less_than", [np.arange(steps, dtype=dtype_of(b, lens))[None, :], column])
    return b.op("cast", [inside], dtype=dtype_of(b, x).name)[0]


def _stack(b, parts: list, axis: int):
    spec = [_ALL] * axis + [["none"]]
    lifted = [b.op("getitem", [p], spec=spec)[0] for p in parts]
    return lifted[0] if len(lifted) == 1 else b.op("concat", lifted, axis=axis)[0]


def _convert(op_type: str):
    def convert(b, node, a, opset):
        if arg(node, 7):
            peepholes = b.known(arg(node, 7))
            if peepholes is None or np.any(peepholes):
                raise ConversionError(f"{b.where()}: LSTM peepholes (input P) are not supported")
        cell = {"LSTM": "lstm", "GRU": "gru"}.get(op_type) or f"rnn_{(_activations(a) or ['tanh'])[0]}"
        layout = int(a.get("layout", 0))
        x = node.input[0] if layout == 1 else b.op("transpose", [node.input[0]], perm=[1, 0, 2])[0]
        w, r = node.input[1], node.input[2]
        hidden = item(b, r).shape[-1]
        mask = _mask(b, node, x)
        ys, finals = [], [[], []]
        for d, reverse in enumerate(_DIRECTIONS[a.get("direction", "forward")]):
            biases = [None, None]
            if arg(node, 3):
                gates = GATES[cell] * hidden
                biases = [_gate_rows(b, node.input[3], d, cell, hidden, off) for off in (0, gates)]
            c0 = _state(b, node, 6, d, layout) if cell == "lstm" else None
            if cell == "gru" and not a.get("linear_before_reset", 0):
                y, h = _gru_reset_first(b, node, x, d, reverse, _state(b, node, 5, d, layout), mask, hidden)
                ys.append(y if layout == 1 else b.op("transpose", [y], perm=[1, 0, 2])[0])
                finals[0].append(h)
                continue
            outs = b.op(
                "rnn_layer",
                [x, _gate_rows(b, w, d, cell, hidden), _gate_rows(b, r, d, cell, hidden), *biases,
                 _state(b, node, 5, d, layout), c0, mask],
                cell=cell, reverse=reverse,
            )  # fmt: skip
            ys.append(outs[0] if layout == 1 else b.op("transpose", [outs[0]], perm=[1, 0, 2])[0])
            for slot, state in zip(finals, outs[1:-1], strict=False):
                slot.append(state)
        y = _stack(b, ys, 2 if layout == 1 else 1)
        return [y] + [_stack(b, slot, layout) for slot in finals if slot]

    return convert


def _gru_reset_first(b, node, x, d: int, reverse: bool, h0, mask, hidden: int):
    """ONNX's GRU with ``linear_before_reset=0`` (``h~ = tanh(x Wh + (r * h) Rh + b)``), unrolled over
    the fixed time steps; ONNX's gate order z, r, h. Returns (outputs [B, T, H], last hidden)."""
    steps = item(b, x).shape[1]
    if not isinstance(steps, int):
        raise ConversionError(
            f"{b.where()}: a GRU with linear_before_reset=0 needs a fixed sequence length, got {steps!r}"
        )
    w, r = node.input[1], node.input[2]
    (w_d,) = b.op("getitem", [w], spec=[["int", d], _ALL, _ALL])
    (r_d,) = b.op("getitem", [r], spec=[["int", d], _ALL, _ALL])
    (xw,) = b.op("matmul", [x, w_d], transpose_y=True)  # [B, T, 3H]
    if arg(node, 3):
        (bias,) = b.op("getitem", [node.input[3]], spec=[["int", d], _ALL])
        (wb,) = b.op("getitem", [bias], spec=[["slice", 0, 3 * hidden, None]])
        (rb,) = b.op("getitem", [bias], spec=[["slice", 3 * hidden, None, None]])
        (xw,) = b.op("add", [xw, b.op("add", [wb, rb])[0]])

    def cols(t, k: int, n: int = 1):
        return b.op("getitem", [t], spec=[_ALL, ["slice", k * hidden, (k + n) * hidden, None]])[0]

    (r_zr,) = b.op("getitem", [r_d], spec=[["slice", 0, 2 * hidden, None], _ALL])
    (r_h,) = b.op("getitem", [r_d], spec=[["slice", 2 * hidden, None, None], _ALL])
    h = h0
    outputs = [None] * steps
    for t in reversed(range(steps)) if reverse else range(steps):
        (xt,) = b.op("getitem", [xw], spec=[_ALL, ["int", t], _ALL])
        if h is None:
            (h,) = b.op("full_like", [cols(xt, 0)], value=0.0, dtype=dtype_of(b, x).name)
        (zr,) = b.op("sigmoid", [b.op("add", [cols(xt, 0, 2), b.op("matmul", [h, r_zr], transpose_y=True)[0]])[0]])
        z, reset = cols(zr, 0), cols(zr, 1)
        (recurrent,) = b.op("matmul", [b.op("multiply", [reset, h])[0], r_h], transpose_y=True)
        (cand,) = b.op("tanh", [b.op("add", [cols(xt, 2), recurrent])[0]])
        (new,) = b.op("add", [cand, b.op("multiply", [z, b.op("subtract", [h, cand])[0]])[0]])  # (1-z)h~ + zh
        if mask is not None:
            (m,) = b.op("getitem", [mask], spec=[_ALL, ["slice", t, t + 1, None]])
            (new_out,) = b.op("multiply", [new, m])
            (new,) = b.op("add", [h, b.op("multiply", [m, b.op("subtract", [new, h])[0]])[0]])
            outputs[t] = new_out
        else:
            outputs[t] = new
        h = new
    return _stack(b, outputs, 1), h


def _rule(op_type: str, extra: set) -> Rule:
    attrs = frozenset({"activations", "clip", "direction", "hidden_size", "layout"} | extra)
    return Rule(_convert(op_type), attrs, check=_check(op_type))


RULES = {
    "LSTM": _rule("LSTM", {"input_forget"}),
    "GRU": _rule("GRU", {"linear_before_reset"}),
    "RNN": _rule("RNN", set()),
}
