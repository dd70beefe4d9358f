"""DBFPN: PaddleOCR's feature pyramid for DB, four backbone maps -> one map at stride 4.

Each input is projected to ``out_channels`` by a 1x1 conv, summed top-down with 2x nearest
upsampling, reduced to ``out_channels // 4`` by a 3x3 conv, upsampled to stride 4 and
concatenated, so the head sees ``out_channels`` channels. Input sides must be multiples of 32.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError


def _up(x, factor: int):
    return paddle.nn.functional.interpolate(x, scale_factor=factor, mode="nearest")


class DBFPN(nn.Layer):
    def __init__(self, in_channels, out_channels: int = 256) -> None:
        super().__init__()
        if len(in_channels) != 4:
            raise ConfigError(f"DBFPN takes four backbone stages, the backbone gives {len(in_channels)}")
        if not isinstance(out_channels, int) or out_channels < 4 or out_channels % 4:
            raise ConfigError(f"Neck.out_channels is {out_channels!r}; use a positive multiple of 4 (e.g. 256)")
        c2, c3, c4, c5 = in_channels
        self.in2_conv = nn.Conv2D(c2, out_channels, 1, bias_attr=False)
        self.in3_conv = nn.Conv2D(c3, out_channels, 1, bias_attr=False)
        self.in4_conv = nn.Conv2D(c4, out_channels, 1, bias_attr=False)
        self.in5_conv = nn.Conv2D(c5, out_channels, 1, bias_attr=False)
        quarter = out_channels // 4
        self.p5_conv = nn.Conv2D(out_channels, quarter, 3, padding=1, bias_attr=False)
        self.p4_conv = nn.Conv2D(out_channels, quarter, 3, padding=1, bias_attr=False)
        self.p3_conv = nn.Conv2D(out_channels, quarter, 3, padding=1, bias_attr=False)
        self.p2_conv = nn.Conv2D(out_channels, quarter, 3, padding=1, bias_attr=False)
        self.out_channels = out_channels

    def forward(self, x):
        c2, c3, c4, c5 = x
        in5 = self.in5_conv(c5)
        out4 = self.in4_conv(c4) + _up(in5, 2)
        out3 = self.in3_conv(c3) + _up(out4, 2)
        out2 = self.in2_conv(c2) + _up(out3, 2)
        p5 = _up(self.p5_conv(in5), 8)
        p4 = _up(self.p4_conv(out4), 4)
        p3 = _up(self.p3_conv(out3), 2)
        return paddle.concat([p5, p4, p3, self.p2_conv(out2)], axis=1)
