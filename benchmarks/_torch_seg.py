"""PP-LiteSeg written in PyTorch for the ``pp_liteseg`` benchmark (benchmarks/dense_vision.py): the
same layers and attribute names as ``paddlectl.seg.models.PPLiteSeg``, so a paddlectl state dict
loads by name (batch-norm statistics renamed) and both frameworks run the same weights. Its
``ConvBN`` and ``load_paddlectl_weights`` also serve the U-Net of ``_torch_unet.py``."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k=3, stride=1, groups=1, relu=False):
        super().__init__()
        self._conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        self._batch_norm = nn.BatchNorm2d(cout)
        self.relu = relu

    def forward(self, x):
        x = self._batch_norm(self._conv(x))
        return F.relu(x) if self.relu else x


def _relu(cin, cout, k=3, stride=1):
    return ConvBN(cin, cout, k, stride, relu=True)


class CatBottleneck(nn.Module):
    def __init__(self, cin, cout, block_num, stride):
        super().__init__()
        widths = [cout // 2] + [cout // 2 ** min(i + 1, block_num - 1) for i in range(1, block_num)]
        widths[-1] = cout - sum(widths[:-1])
        self.avd = ConvBN(widths[0], widths[0], 3, 2, groups=widths[0]) if stride == 2 else None
        self.skip = nn.AvgPool2d(3, 2, 1, count_include_pad=False) if stride == 2 else None
        self.convs = nn.ModuleList(
            [_relu(cin, widths[0], 1)] + [_relu(widths[i - 1], widths[i]) for i in range(1, block_num)]
        )

    def forward(self, x):
        first = self.convs[0](x)
        start = first if self.avd is None else self.avd(first)
        chain = itertools.accumulate(self.convs[1:], lambda y, conv: conv(y), initial=start)
        return torch.cat([first if self.skip is None else self.skip(first), *list(chain)[1:]], 1)


class STDCNet(nn.Module):
    def __init__(self, base, layers, block_num=4):
        super().__init__()
        self.stem = nn.ModuleList([_relu(3, base // 2, 3, 2), _relu(base // 2, base, 3, 2)])
        widths = [base] + [base * 4 * 2**i for i in range(3)]
        self.stages = nn.ModuleList(
            nn.Sequential(
                *(CatBottleneck(widths[i + (j > 0)], widths[i + 1], block_num, 1 if j else 2) for j in range(n))
            )
            for i, n in enumerate(layers)
        )
        self.feat_channels = [base // 2, base, base * 4, base * 8, base * 16]

    def forward(self, x):
        feats = []
        for conv in [*self.stem, *self.stages]:
            x = conv(x)
            feats.append(x)
        return feats


def _resize(x, size):
    return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class SPPM(nn.Module):
    def __init__(self, cin, inter, cout, bins):
        super().__init__()
        self.bins = bins
        self.stages = nn.ModuleList([_relu(cin, inter, 1) for _ in bins])
        self.conv_out = _relu(inter, cout)

    def forward(self, x):
        size = x.shape[2:]
        return self.conv_out(
            sum(_resize(s(F.adaptive_avg_pool2d(x, b)), size) for b, s in zip(self.bins, self.stages, strict=True))
        )


class UAFM(nn.Module):
    def __init__(self, low, high, out):
        super().__init__()
        self.conv_x = _relu(low, high)
        self.conv_out = _relu(high, out)
        self.conv_atten = nn.Sequential(_relu(4, 2), ConvBN(2, 1))

    def forward(self, low, high):
        x = self.conv_x(low)
        y = _resize(high, x.shape[2:])
        stats = [x.mean(1, keepdim=True), x.amax(1, keepdim=True), y.mean(1, keepdim=True), y.amax(1, keepdim=True)]
        atten = torch.sigmoid(self.conv_atten(torch.cat(stats, 1)))
        return self.conv_out(x * atten + y * (1 - atten))


class SegHead(nn.Module):
    def __init__(self, cin, mid, classes):
        super().__init__()
        self.conv = _relu(cin, mid)
        self.conv_out = nn.Conv2d(mid, classes, 1)

    def forward(self, x):
        return self.conv_out(self.conv(x))


class PPLiteSeg(nn.Module):
    """Eval-mode PP-LiteSeg (the finest head only), the architecture arguments of the paddlectl model."""

    def __init__(self, num_classes, backbone, backbone_indices=(2, 3, 4), cm_bin_sizes=(1, 2, 4), cm_out_ch=128,
                 arm_out_chs=(64, 96, 128), seg_head_inter_chs=(64, 64, 64)):  # fmt: skip
        super().__init__()
        settings = {k: v for k, v in backbone.items() if k != "name"}
        self.backbone = STDCNet(
            settings.get("base", 64), settings.get("layers", (2, 2, 2)), settings.get("block_num", 4)
        )
        self.indices = list(backbone_indices)
        channels = [self.backbone.feat_channels[i] for i in self.indices]
        self.sppm = SPPM(channels[-1], cm_out_ch, cm_out_ch, list(cm_bin_sizes))
        arms, high = [], cm_out_ch
        for low, out in reversed(list(zip(channels, arm_out_chs, strict=True))):
            arms.append(UAFM(low, high, out))
            high = out
        self.arms = nn.ModuleList(arms)
        self.heads = nn.ModuleList(
            [SegHead(c, m, num_classes) for c, m in zip(arm_out_chs, seg_head_inter_chs, strict=True)]
        )

    def forward(self, x):
        size = x.shape[2:]
        feats = self.backbone(x)
        feats = [feats[i] for i in self.indices]
        high = self.sppm(feats[-1])
        for arm, low in zip(self.arms, reversed(feats), strict=True):
            high = arm(low, high)
        return _resize(self.heads[0](high), size)


def load_paddlectl_weights(model: nn.Module, state: dict) -> nn.Module:
    """``state`` (paddlectl names -> arrays) into ``model``; every torch weight must be filled."""
    renamed = {
        k.replace("._mean", ".running_mean").replace("._variance", ".running_var"): torch.from_numpy(np.asarray(v))
        for k, v in state.items()
    }
    missing, unexpected = model.load_state_dict(renamed, strict=False)
    missing = [m for m in missing if not m.endswith("num_batches_tracked")]
    if missing or unexpected:
        raise ValueError(
            f"weights do not fit the torch {type(model).__name__}: missing {missing[:3]}, unexpected {unexpected[:3]}"
        )
    return model.eval()
