"""The conv + batch-norm (+ ReLU) units every PaddleSeg model is built from."""

from __future__ import annotations

from paddlectl.framework import nn


class ConvBN(nn.Layer):
    """Conv (no bias: the norm has one) then BatchNorm; ``padding`` keeps the size at stride 1."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1, groups: int = 1):
        super().__init__()
        self._conv = nn.Conv2D(
            in_channels, out_channels, kernel_size, stride, kernel_size // 2, groups=groups, bias_attr=False
        )
        self._batch_norm = nn.BatchNorm2D(out_channels)

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class ConvBNReLU(ConvBN):
    def forward(self, x):
        return nn.functional.relu(super().forward(x))
