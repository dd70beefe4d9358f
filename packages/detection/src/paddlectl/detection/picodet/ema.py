"""Exponential moving average of a model's weights, kept as buffers of the model itself.

PaddleDetection evaluates and exports the EMA weights (``use_ema``). Here the averages are
persistable buffers, so checkpoints carry them and resuming continues them; ``eval()`` swaps them
into the parameters and ``train()`` swaps the trained values back, so the trainer's evaluation,
``export`` and ``predict`` all see the averaged weights without knowing about them.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework import nn, to_tensor


class WeightEMA(nn.Layer):
    """``decay`` with PaddleDetection's warm-up ``min(decay, (1 + step) / (10 + step))``."""

    def __init__(self, params: dict, decay: float = 0.9998) -> None:
        super().__init__()
        self.decay = float(decay)
        self.names = {name: name.replace(".", "__") for name in params}
        for name, param in params.items():
            self.register_buffer(self.names[name], to_tensor(param.numpy()))
        self.register_buffer("step", to_tensor(np.zeros(1, np.float32)))
        self._held: dict | None = None

    def update(self, params: dict) -> None:
        """One step of the average towards the current ``params`` (called before each training forward)."""
        step = float(self.step.numpy()[0])
        decay = min(self.decay, (1 + step) / (10 + step))
        for name, param in params.items():
            average = getattr(self, self.names[name])
            average.set_value(decay * average.numpy() + (1 - decay) * param.numpy())
        self.step.set_value(np.array([step + 1], np.float32))

    def swap_in(self, params: dict) -> None:
        """Put the averages into ``params`` (once), holding the trained values."""
        if self._held is None:
            self._held = {name: param.numpy().copy() for name, param in params.items()}
            for name, param in params.items():
                param.set_value(getattr(self, self.names[name]).numpy())

    def swap_out(self, params: dict) -> None:
        """Give ``params`` their trained values back."""
        if self._held is not None:
            for name, param in params.items():
                param.set_value(self._held[name])
            self._held = None
