"""PicoDet (LCNet, LC-PAN, PicoHead) written in PyTorch for the detector benchmark
(benchmarks/dense_vision.py): the same layers, widths and strides as ``paddlectl.detection.picodet``,
so one training step of the network can be timed in both frameworks on the same input."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from paddlectl.detection.picodet.backbone import STAGES, _width


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, stride=1, groups=1):
        super().__init__(
            nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout),
            nn.Hardswish(),
        )


def separable(cin, cout, k=3, stride=1):
    return nn.Sequential(ConvBN(cin, cin, k, stride, groups=cin), ConvBN(cin, cout, 1))


class TorchPicoDet(nn.Module):
    """Backbone (``scale``), neck (``width``) and head (``num_convs``, ``num_classes``, ``reg_max``) as ours."""

    def __init__(self, scale: float, width: int, num_classes: int, reg_max: int = 7, num_convs: int = 2):
        super().__init__()
        self.stem = ConvBN(3, _width(16, scale), 3, 2)
        self.stages = nn.ModuleList(
            nn.Sequential(*(separable(_width(i, scale), _width(o, scale), k, s) for k, i, o, s in stage))
            for stage in STAGES
        )
        levels = [_width(stage[-1][2], scale) for stage in STAGES[2:]]
        self.lateral = nn.ModuleList(ConvBN(c, width, 1) for c in levels)
        self.top_down = nn.ModuleList(separable(2 * width, width, 5) for _ in levels[1:])
        self.down = nn.ModuleList(separable(width, width, 5, 2) for _ in levels[1:])
        self.bottom_up = nn.ModuleList(separable(2 * width, width, 5) for _ in levels[1:])
        self.branches = nn.ModuleList(
            nn.Sequential(*(separable(width, width, 5) for _ in range(num_convs))) for _ in levels
        )
        self.outputs = nn.ModuleList(nn.Conv2d(width, num_classes + 4 * (reg_max + 1), 1) for _ in levels)

    def forward(self, x):
        x, features = self.stem(x), []
        for index, stage in enumerate(self.stages):
            x = stage(x)
            if index >= 2:
                features.append(x)
        maps = [lateral(f) for lateral, f in zip(self.lateral, features, strict=True)]
        for i in range(len(maps) - 1, 0, -1):
            up = F.interpolate(maps[i], size=maps[i - 1].shape[2:], mode="nearest")
            maps[i - 1] = self.top_down[i - 1](torch.cat([maps[i - 1], up], 1))
        for i in range(len(maps) - 1):
            maps[i + 1] = self.bottom_up[i](torch.cat([maps[i + 1], self.down[i](maps[i])], 1))
        heads = [
            out(branch(m)).flatten(2).transpose(1, 2)
            for branch, out, m in zip(self.branches, self.outputs, maps, strict=True)
        ]
        return torch.cat(heads, 1)
