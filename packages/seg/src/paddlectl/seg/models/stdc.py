"""STDC ("Short-Term Dense Concatenate") backbone, PP-LiteSeg's encoder.

Each block halves the width of successive 3x3 convs and concatenates all their outputs, so a
block sees several receptive fields at the cost of one wide conv. ``base`` scales every width
(STDC1/STDC2 use 64; smaller values fit a CPU budget) and ``layers`` gives the blocks per stage
(STDC1 ``[2, 2, 2]``, STDC2 ``[4, 5, 3]``). The forward returns the five feature maps at strides
2, 4, 8, 16 and 32, as PaddleSeg's backbones do, for a head to pick from.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError

from .layers import ConvBN, ConvBNReLU


class CatBottleneck(nn.Layer):
    """``block_num`` convs of widths out/2, out/4, ..., concatenated to ``out_channels``; at stride 2
    a depthwise stride-2 conv follows the first and the first's skip is average-pooled."""

    def __init__(self, in_channels: int, out_channels: int, block_num: int = 4, stride: int = 1) -> None:
        super().__init__()
        widths = [out_channels // 2]
        for i in range(1, block_num):
            widths.append(out_channels // 2 ** min(i + 1, block_num - 1))
        widths[-1] = out_channels - sum(widths[:-1])  # the concatenation is exactly out_channels
        self.stride = stride
        self.avd = ConvBN(widths[0], widths[0], 3, 2, groups=widths[0]) if stride == 2 else None
        self.skip = nn.AvgPool2D(3, 2, 1) if stride == 2 else None
        convs = [ConvBNReLU(in_channels, widths[0], 1)]
        for i in range(1, block_num):
            convs.append(ConvBNReLU(widths[i - 1], widths[i], 3))
        self.convs = nn.LayerList(convs)

    def forward(self, x):
        first = self.convs[0](x)
        out = self.avd(first) if self.avd is not None else first
        outs = [self.skip(first) if self.skip is not None else first]
        for conv in self.convs[1:]:
            out = conv(out)
            outs.append(out)
        return paddle.concat(outs, axis=1)


class STDCNet(nn.Layer):
    """Stem (two stride-2 convs) then three stages of CatBottlenecks, each opening at stride 2."""

    def __init__(self, in_channels: int = 3, base: int = 64, layers=(2, 2, 2), block_num: int = 4) -> None:
        super().__init__()
        if not isinstance(base, int) or base < 8 or base % 8:
            raise ConfigError(f"STDCNet.base is {base!r}; use a multiple of 8 (64 is STDC1/STDC2)")
        if len(layers) != 3 or not all(isinstance(n, int) and n >= 1 for n in layers):
            raise ConfigError(f"STDCNet.layers is {layers!r}; give three block counts, e.g. [2, 2, 2]")
        self.stem = nn.LayerList([ConvBNReLU(in_channels, base // 2, 3, 2), ConvBNReLU(base // 2, base, 3, 2)])
        stages, width = [], base
        for i, count in enumerate(layers):
            out = base * 4 * 2**i
            blocks = [CatBottleneck(width, out, block_num, 2)]
            blocks += [CatBottleneck(out, out, block_num, 1) for _ in range(count - 1)]
            stages.append(nn.Sequential(*blocks))
            width = out
        self.stages = nn.LayerList(stages)
        self.feat_channels = [base // 2, base, base * 4, base * 8, base * 16]

    def forward(self, x):
        feats = []
        for conv in self.stem:
            x = conv(x)
            feats.append(x)
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return feats
