"""U-Net written in PyTorch for the ``segmenter`` benchmark (benchmarks/dense_vision.py): the same
layers and attribute names as ``paddlectl.seg.models.UNet``, so a paddlectl state dict loads by
name through ``_torch_seg.load_paddlectl_weights`` and both frameworks run the same weights."""

from __future__ import annotations

import torch
from _torch_seg import ConvBN
from torch import nn
from torch.nn import functional as F


def _double(cin, cout):
    return nn.Sequential(ConvBN(cin, cout, relu=True), ConvBN(cout, cout, relu=True))


class UNet(nn.Module):
    """Eval-mode U-Net, the architecture arguments of the paddlectl model."""

    def __init__(self, num_classes, in_channels=3, base=64, depth=4):
        super().__init__()
        widths = [base * 2**i for i in range(depth + 1)]
        self.inc = _double(in_channels, widths[0])
        self.down = nn.ModuleList([_double(widths[i], widths[i + 1]) for i in range(depth)])
        self.up = nn.ModuleList([_double(widths[i + 1] + widths[i], widths[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(widths[0], num_classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for block in self.down:
            skips.append(block(F.max_pool2d(skips[-1], 2, 2)))
        y = skips.pop()
        for block in self.up:
            skip = skips.pop()
            y = F.interpolate(y, size=skip.shape[2:], mode="bilinear", align_corners=False)
            y = block(torch.cat([y, skip], 1))
        return self.head(y)
