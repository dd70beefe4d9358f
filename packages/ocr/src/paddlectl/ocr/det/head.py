"""DBHead: probability and threshold maps at full resolution, and DB's differentiable binarisation.

Two identical branches (3x3 conv -> BN -> ReLU -> 2x2 transposed conv -> BN -> ReLU -> 2x2
transposed conv -> sigmoid) take the neck's stride-4 map back to the input size. In training the
head returns ``[shrink, threshold, binary]`` stacked on the channel axis, ``binary`` being the
approximate step ``1 / (1 + exp(-k (P - T)))``; in eval mode only the probability map, which is
all inference needs (the exported model has no threshold branch), as in PaddleOCR.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError


class Head(nn.Layer):
    """One branch: ``in_channels`` at stride 4 -> one sigmoid channel at stride 1."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        quarter = in_channels // 4
        self.conv1 = nn.Conv2D(in_channels, quarter, 3, padding=1, bias_attr=False)
        self.conv_bn1 = nn.BatchNorm2D(quarter)
        self.conv2 = nn.Conv2DTranspose(quarter, quarter, 2, stride=2)
        self.conv_bn2 = nn.BatchNorm2D(quarter)
        self.conv3 = nn.Conv2DTranspose(quarter, 1, 2, stride=2)

    def forward(self, x):
        relu = paddle.nn.functional.relu
        x = relu(self.conv_bn1(self.conv1(x)))
        x = relu(self.conv_bn2(self.conv2(x)))
        return paddle.nn.functional.sigmoid(self.conv3(x))


def step_function(shrink, threshold, k: float):
    """DB's differentiable binarisation: a sigmoid of ``k (P - T)``, steep around the threshold."""
    return paddle.reciprocal(1 + paddle.exp(-k * (shrink - threshold)))


class DBHead(nn.Layer):
    def __init__(self, in_channels: int, k: float = 50) -> None:
        super().__init__()
        if not isinstance(k, int | float) or isinstance(k, bool) or k <= 0:
            raise ConfigError(f"Head.k is {k!r}; the binarisation steepness must be a positive number (DB uses 50)")
        self.k = float(k)
        self.binarize = Head(in_channels)
        self.thresh = Head(in_channels)

    def forward(self, x):
        shrink = self.binarize(x)
        if not self.training:
            return shrink
        threshold = self.thresh(x)
        return paddle.concat([shrink, threshold, step_function(shrink, threshold, self.k)], axis=1)
