"""The two convolution blocks every part of PicoDet is built from (PP-LCNet's ConvBNLayer and its
depthwise-separable block), so backbone, neck and head share one definition."""

from __future__ import annotations

from paddlectl.framework import nn


class ConvBN(nn.Layer):
    """Conv (no bias) -> BatchNorm -> hardswish (or no activation with ``act=False``)."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, stride: int = 1, groups: int = 1, act=True):
        super().__init__()
        self.conv = nn.Conv2D(
            in_channels, out_channels, kernel, stride=stride, padding=(kernel - 1) // 2, groups=groups, bias_attr=False
        )
        self.bn = nn.BatchNorm2D(out_channels)
        self.act = nn.Hardswish() if act else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        return self.act(x) if self.act is not None else x


class DepthwiseSeparable(nn.Layer):
    """Depthwise ``kernel`` x ``kernel`` (carries the stride) then pointwise 1x1: PP-LCNet's block."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int = 3, stride: int = 1):
        super().__init__()
        self.dw = ConvBN(in_channels, in_channels, kernel, stride, groups=in_channels)
        self.pw = ConvBN(in_channels, out_channels, 1)

    def forward(self, x):
        return self.pw(self.dw(x))
