"""Layers that rearrange pixels into channels or patches into columns and back, over ``ops.patches``."""

from __future__ import annotations

from ...ops import patches as P
from .activation import _activation_layer
from .base import Layer

__all__ = ["PixelShuffle", "PixelUnshuffle", "Unfold", "Fold"]

PixelShuffle = _activation_layer("PixelShuffle", P.pixel_shuffle, upscale_factor=None, data_format="NCHW")
PixelUnshuffle = _activation_layer("PixelUnshuffle", P.pixel_unshuffle, downscale_factor=None, data_format="NCHW")


class Unfold(Layer):
    def __init__(self, kernel_sizes, dilations=1, paddings=0, strides=1, name=None) -> None:
        super().__init__()
        self._config = dict(kernel_sizes=kernel_sizes, strides=strides, paddings=paddings, dilations=dilations)

    def forward(self, x):
        return P.unfold(x, **self._config)


class Fold(Layer):
    def __init__(self, output_sizes, kernel_sizes, dilations=1, paddings=0, strides=1, name=None) -> None:
        super().__init__()
        self._config = dict(
            output_sizes=output_sizes, kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
            dilations=dilations,
        )  # fmt: skip

    def forward(self, x):
        return P.fold(x, **self._config)
