"""PicoHead: a GFL head (generalised focal loss) with DFL box regression, one branch per stride.

Each level runs ``num_convs`` depthwise-separable blocks, then one 1x1 conv giving per cell
``num_classes`` class logits and ``4 * (reg_max + 1)`` logits of a discrete distribution over each
side's distance (in strides); the distance is its expectation. ``forward`` returns the raw
predictions of every cell, levels concatenated, ``[N, A, num_classes + 4 * (reg_max + 1)]``: the
loss and the metric decode them in NumPy, ``decode`` does it with ops for the exported model.
"""

from __future__ import annotations

import math

import numpy as np

from paddlectl.framework import concat, nn, to_tensor
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F

from .anchors import anchor_points
from .layers import DepthwiseSeparable

PRIOR = 0.01  # the class bias starts every score at 1%, as RetinaNet/GFL initialise it


class PicoHead(nn.Layer):
    def __init__(
        self,
        in_channels,
        num_classes: int = 80,
        reg_max: int = 7,
        strides=(8, 16, 32),
        num_convs: int = 2,
        kernel: int = 5,
    ) -> None:
        super().__init__()
        if not isinstance(num_classes, int) or num_classes < 1:
            raise ConfigError(f"PicoHead.num_classes is {num_classes!r}; give the dataset's number of categories")
        if len(strides) != len(in_channels):
            raise ConfigError(
                f"PicoHead.strides {list(strides)} must give one stride per neck output ({len(in_channels)})"
            )
        if not 1 <= reg_max <= 32:
            raise ConfigError(f"PicoHead.reg_max is {reg_max!r}; use 1..32 (PicoDet uses 7)")
        self.num_classes, self.reg_max, self.strides = num_classes, reg_max, [int(s) for s in strides]
        self.branches = nn.LayerList(
            nn.Sequential(*[DepthwiseSeparable(c, c, kernel) for _ in range(num_convs)]) for c in in_channels
        )
        self.outputs = nn.LayerList(nn.Conv2D(c, num_classes + 4 * (reg_max + 1), 1) for c in in_channels)
        bias = np.zeros(num_classes + 4 * (reg_max + 1), np.float32)
        bias[:num_classes] = -math.log((1 - PRIOR) / PRIOR)
        for conv in self.outputs:
            conv.bias.set_value(bias)

    def forward(self, features):
        flat = []
        for branch, output, x in zip(self.branches, self.outputs, features, strict=True):
            y = output(branch(x))
            flat.append(y.flatten(2).transpose([0, 2, 1]))
        return concat(flat, axis=1)

    def decode(self, raw, height: int, width: int):
        """``raw`` predictions of an ``height`` x ``width`` input -> ``(boxes [N, A, 4] x1y1x2y2 in
        input pixels, scores [N, C, A])``: PaddleDetection's head outputs before NMS."""
        c, bins = self.num_classes, self.reg_max + 1
        points, stride = anchor_points(height, width, self.strides)
        scores = F.sigmoid(raw[:, :, :c]).transpose([0, 2, 1])
        dist = F.softmax(raw[:, :, c:].reshape([0, -1, 4, bins]), axis=-1)
        dist = dist.matmul(to_tensor(np.arange(bins, dtype=np.float32).reshape(bins, 1))).squeeze(-1)
        dist = dist * to_tensor(stride.reshape(1, -1, 1))
        points = to_tensor(np.concatenate([points, points], 1)[None])
        sign = to_tensor(np.array([-1, -1, 1, 1], np.float32))
        return points + dist * sign, scores
