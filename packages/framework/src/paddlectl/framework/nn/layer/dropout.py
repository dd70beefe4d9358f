"""Dropout layers: active in training, Paddle's inference behaviour after ``eval()``."""

from __future__ import annotations

from ...ops import dropout as D
from .base import Layer

__all__ = ["Dropout", "Dropout2D"]


class Dropout(Layer):
    def __init__(self, p=0.5, inplace=False, axis=None, mode="upscale_in_train", name=None):
        super().__init__()
        if not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be a number in [0, 1], got {p!r}")
        if mode not in D.MODES:
            raise ValueError(f"Dropout: mode must be one of {D.MODES}, got {mode!r}")
        self.p, self.axis, self.mode, self.inplace = p, axis, mode, inplace

    def forward(self, x):
        return D.dropout(x, p=self.p, axis=self.axis, training=self.training, mode=self.mode)

    def extra_repr(self):
        return f"p={self.p}, axis={self.axis}, mode={self.mode}, inplace={self.inplace}"


class Dropout2D(Layer):
    """Zeroes whole channels of [N, C, H, W] (or [N, H, W, C]) inputs."""

    def __init__(self, p=0.5, data_format="NCHW", name=None):
        super().__init__()
        self.p, self.data_format = p, data_format

    def forward(self, x):
        return D.dropout2d(x, p=self.p, training=self.training, data_format=self.data_format)

    def extra_repr(self):
        return f"p={self.p}, data_format={self.data_format}"
