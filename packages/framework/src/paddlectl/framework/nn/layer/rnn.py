"""LSTM, GRU and SimpleRNN (multi-layer, bidirectional, batch-first by default) and their cells.

Each layer and direction is one ``rnn_layer`` op; parameters carry Paddle's names
(``weight_ih_l0``, ``weight_hh_l0_reverse``...) so checkpoints interchange.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.tensor import Tensor
from ...errors import ShapeError
from ...ops.dropout import dropout
from ...ops.rnn import GATES, rnn_layer
from ...ops.shape import concat, stack, transpose, unsqueeze
from .. import initializer as init
from .base import Layer

__all__ = ["LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell"]


def _cell_params(layer: Layer, suffix: str, input_size: int, hidden_size: int, gates: int, attrs) -> None:
    std = 1.0 / math.sqrt(hidden_size)
    uniform = init.Uniform(-std, std)
    w_ih_attr, w_hh_attr, b_ih_attr, b_hh_attr = attrs
    shapes = {
        "weight_ih": ([gates * hidden_size, input_size], w_ih_attr, False),
        "weight_hh": ([gates * hidden_size, hidden_size], w_hh_attr, False),
        "bias_ih": ([gates * hidden_size], b_ih_attr, True),
        "bias_hh": ([gates * hidden_size], b_hh_attr, True),
    }
    for name, (shape, attr, is_bias) in shapes.items():
        param = layer.create_parameter(shape, attr=attr, is_bias=is_bias, default_initializer=uniform)
        layer.add_parameter(name + suffix, param)


def _lengths_mask(sequence_length, batch: int, steps: int, dtype) -> Tensor | None:
    if sequence_length is None:
        return None
    lengths = np.asarray(sequence_length.numpy() if isinstance(sequence_length, Tensor) else sequence_length).reshape(
        -1
    )
    if lengths.shape[0] != batch:
        raise ShapeError(f"RNN: sequence_length has {lengths.shape[0]} entries for a batch of {batch}")
    return Tensor._wrap((np.arange(steps)[None, :] < lengths[:, None]).astype(dtype))


class RNNBase(Layer):
    CELL = "lstm"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        direction: str = "forward",
        time_major: bool = False,
        dropout: float = 0.0,
        weight_ih_attr=None,
        weight_hh_attr=None,
        bias_ih_attr=None,
        bias_hh_attr=None,
        activation: str = "tanh",
        name=None,
    ) -> None:
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError(f"{type(self).__name__}: direction must be 'forward' or 'bidirect', got {direction!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.num_directions = 1 if direction == "forward" else 2
        self.time_major, self.dropout = time_major, dropout
        self.cell = self.CELL if self.CELL != "rnn" else f"rnn_{activation}"
        attrs = (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * self.num_directions
            for d in range(self.num_directions):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                _cell_params(self, suffix, layer_input, hidden_size, GATES[self.cell], attrs)

    def _initial(self, initial_states, batch: int):
        """The given initial states, checked; None for zeros (which the op makes: see ``ops.rnn``)."""
        count = self.num_layers * self.num_directions
        if initial_states is None:
            return None
        states = tuple(initial_states) if isinstance(initial_states, list | tuple) else (initial_states,)
        for s in states:
            if s.shape != [count, batch, self.hidden_size]:
                raise ShapeError(
                    f"{type(self).__name__}: initial state has shape {s.shape}, expected {[count, batch, self.hidden_size]}"
                )
        return states

    def forward(self, inputs, initial_states=None, sequence_length=None):
        if inputs.ndim != 3 or inputs.shape[-1] != self.input_size:
            raise ShapeError(
                f"{type(self).__name__}: expected input [batch, time, {self.input_size}], got {inputs.shape}"
            )
        x = transpose(inputs, [1, 0, 2]) if self.time_major else inputs
        batch, steps = x.shape[0], x.shape[1]
        states = self._initial(initial_states, batch)
        mask = _lengths_mask(sequence_length, batch, steps, x.dtype)
        finals = [[] for _ in range(2 if self.cell == "lstm" else 1)]
        for layer in range(self.num_layers):
            outputs = []
            for d in range(self.num_directions):
                k = layer * self.num_directions + d
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                p = self._parameters
                h0, c0 = (None, None) if states is None else (states[0][k], states[1][k] if len(states) > 1 else None)
                result = rnn_layer(
                    x, p["weight_ih" + suffix], p["weight_hh" + suffix], p["bias_ih" + suffix], p["bias_hh" + suffix],
                    h0, c0, mask, cell=self.cell, reverse=bool(d),
                )  # fmt: skip
                outputs.append(result[0])
                for slot, value in zip(finals, result[1:], strict=True):
                    slot.append(value)
            x = outputs[0] if len(outputs) == 1 else concat(outputs, axis=-1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = dropout(x, p=self.dropout, training=True)
        out = transpose(x, [1, 0, 2]) if self.time_major else x
        final = tuple(stack(slot, axis=0) for slot in finals)
        return out, (final if self.cell == "lstm" else final[0])

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, directions={self.num_directions}"


class LSTM(RNNBase):
    CELL = "lstm"


class GRU(RNNBase):
    CELL = "gru"


class SimpleRNN(RNNBase):
    CELL = "rnn"


class _Cell(Layer):
    CELL = "lstm"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        weight_ih_attr=None,
        weight_hh_attr=None,
        bias_ih_attr=None,
        bias_hh_attr=None,
        activation: str = "tanh",
        name=None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.cell = self.CELL if self.CELL != "rnn" else f"rnn_{activation}"
        _cell_params(
            self,
            "",
            input_size,
            hidden_size,
            GATES[self.cell],
            (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr),
        )

    def forward(self, inputs, states=None):
        if states is None:
            h0 = c0 = None  # zeros, made by the op
        else:
            h0, c0 = states if self.cell == "lstm" else (states, None)
        result = rnn_layer(
            unsqueeze(inputs, 1),
            self.weight_ih,
            self.weight_hh,
            self.bias_ih,
            self.bias_hh,
            h0,
            c0,
            None,
            cell=self.cell,
        )
        h = result[1]
        return (h, (h, result[2])) if self.cell == "lstm" else (h, h)


class LSTMCell(_Cell):
    CELL = "lstm"


class GRUCell(_Cell):
    CELL = "gru"


class SimpleRNNCell(_Cell):
    CELL = "rnn"
