"""U-Net: a contracting path of double convs, an expanding path that upsamples and concatenates
the matching encoder map (the skip connection keeps the detail pooling loses), and a 1x1 head.

``base`` sets the first width (64 in the paper and PaddleSeg); each of ``depth`` levels doubles
it. Returns one logit map at the input size; the input's sides must divide by ``2**depth``.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError, ShapeError
from paddlectl.framework.nn import functional as F

from .layers import ConvBNReLU


def _double(in_channels: int, out_channels: int) -> nn.Sequential:
    return nn.Sequential(ConvBNReLU(in_channels, out_channels, 3), ConvBNReLU(out_channels, out_channels, 3))


class UNet(nn.Layer):
    def __init__(self, num_classes: int, in_channels: int = 3, base: int = 64, depth: int = 4) -> None:
        super().__init__()
        if not isinstance(depth, int) or not 1 <= depth <= 5 or not isinstance(base, int) or base < 4:
            raise ConfigError(f"UNet needs depth 1..5 and base >= 4, got depth {depth!r} and base {base!r}")
        widths = [base * 2**i for i in range(depth + 1)]
        self.depth = depth
        self.inc = _double(in_channels, widths[0])
        self.down = nn.LayerList([_double(widths[i], widths[i + 1]) for i in range(depth)])
        self.up = nn.LayerList([_double(widths[i + 1] + widths[i], widths[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2D(widths[0], num_classes, 1)

    def forward(self, x):
        height, width = x.shape[2:]
        step = 2**self.depth
        if isinstance(height, int) and isinstance(width, int) and (height % step or width % step):
            raise ShapeError(f"UNet of depth {self.depth} takes sides divisible by {step}, got {height}x{width}")
        skips = [self.inc(x)]
        for block in self.down:
            skips.append(block(F.max_pool2d(skips[-1], 2, 2)))
        y = skips.pop()
        for block in self.up:
            skip = skips.pop()
            y = F.interpolate(y, size=list(skip.shape[2:]), mode="bilinear", align_corners=False)
            y = block(paddle.concat([y, skip], axis=1))
        out = self.head(y)
        return out if not self.training else [out]
