"""LCNet: PP-LCNet's stack of depthwise-separable blocks (hardswish, 3x3 then 5x5 kernels), the
backbone PP-PicoDet uses; ``scale`` widens or narrows every stage. Returns the feature maps at
strides 8, 16 and 32 the neck fuses."""

from __future__ import annotations

from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError

from .layers import ConvBN, DepthwiseSeparable

# (kernel, in, out, stride) per block, grouped by the stage whose output may be returned
STAGES = (
    ((3, 16, 32, 1),),
    ((3, 32, 64, 2), (3, 64, 64, 1)),
    ((3, 64, 128, 2), (3, 128, 128, 1)),  # stride 8
    ((3, 128, 256, 2), (5, 256, 256, 1), (5, 256, 256, 1)),  # stride 16
    ((5, 256, 512, 2), (5, 512, 512, 1)),  # stride 32
)


def _width(channels: int, scale: float) -> int:
    """Channels times ``scale``, rounded to a multiple of 8 as PP-LCNet rounds them."""
    return max(8, int(channels * scale + 4) // 8 * 8)


class LCNet(nn.Layer):
    """``forward(image [N, 3, H, W])`` -> ``[C3, C4, C5]`` at strides 8, 16, 32."""

    def __init__(self, scale: float = 1.0, in_channels: int = 3) -> None:
        super().__init__()
        if not 0.1 <= float(scale) <= 2.0:
            raise ConfigError(
                f"LCNet.scale is {scale!r}; use a width multiplier in [0.1, 2.0] (PP-LCNet uses 0.25-1.0)"
            )
        self.stem = ConvBN(in_channels, _width(16, scale), 3, stride=2)
        self.stages = nn.LayerList(
            nn.Sequential(*[DepthwiseSeparable(_width(i, scale), _width(o, scale), k, s) for k, i, o, s in stage])
            for stage in STAGES
        )
        self.out_channels = [_width(stage[-1][2], scale) for stage in STAGES[2:]]

    def forward(self, x):
        x = self.stem(x)
        features = []
        for index, stage in enumerate(self.stages):
            x = stage(x)
            if index >= 2:
                features.append(x)
        return features
