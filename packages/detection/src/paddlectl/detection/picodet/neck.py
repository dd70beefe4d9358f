"""LCPAN: PP-PicoDet's path-aggregation neck made of depthwise-separable convolutions.

Every input is projected to ``out_channels`` (1x1), then a top-down pass (upsample, concatenate,
fuse) carries semantics to the fine map and a bottom-up pass (stride-2 depthwise conv, concatenate,
fuse) carries localisation back to the coarse ones.
"""

from __future__ import annotations

from paddlectl.framework import concat, nn
from paddlectl.framework.nn import functional as F

from .layers import ConvBN, DepthwiseSeparable


class LCPAN(nn.Layer):
    """``forward([C3, C4, C5])`` -> ``[P3, P4, P5]``, each ``out_channels`` wide."""

    def __init__(self, in_channels, out_channels: int = 96, kernel: int = 5) -> None:
        super().__init__()
        levels = len(in_channels)
        self.lateral = nn.LayerList(ConvBN(c, out_channels, 1) for c in in_channels)
        self.top_down = nn.LayerList(
            DepthwiseSeparable(2 * out_channels, out_channels, kernel) for _ in range(levels - 1)
        )
        self.down = nn.LayerList(DepthwiseSeparable(out_channels, out_channels, kernel, 2) for _ in range(levels - 1))
        self.bottom_up = nn.LayerList(
            DepthwiseSeparable(2 * out_channels, out_channels, kernel) for _ in range(levels - 1)
        )
        self.out_channels = [out_channels] * levels

    def forward(self, features):
        maps = [lateral(f) for lateral, f in zip(self.lateral, features, strict=True)]
        for i in range(len(maps) - 1, 0, -1):  # top-down
            up = F.interpolate(maps[i], size=maps[i - 1].shape[2:], mode="nearest")
            maps[i - 1] = self.top_down[i - 1](concat([maps[i - 1], up], axis=1))
        for i in range(len(maps) - 1):  # bottom-up
            maps[i + 1] = self.bottom_up[i](concat([maps[i + 1], self.down[i](maps[i])], axis=1))
        return maps
