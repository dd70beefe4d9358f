"""PP-LiteSeg: an STDC encoder, a simple pyramid pooling module (SPPM) on the deepest map, and a
decoder that fuses each shallower map with a unified attention fusion module (UAFM).

UAFM weighs the upsampled deep feature against the shallow one pixel by pixel: a spatial
attention map from the mean and max over channels of both decides how much of each to keep
(``out = up * a + low * (1 - a)``), which costs far less than channel attention on wide maps.
In training every decoder level has a segmentation head (deep supervision, one loss each); in
eval mode only the finest head runs and the model returns one logit map at the input size.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F

from .layers import ConvBN, ConvBNReLU
from .stdc import STDCNet


def _resize(x, size):
    return F.interpolate(x, size=list(size), mode="bilinear", align_corners=False)


class SPPM(nn.Layer):
    """Average-pool to each bin size, 1x1 conv, upsample back, sum, then a 3x3 conv."""

    def __init__(self, in_channels: int, inter_channels: int, out_channels: int, bin_sizes=(1, 2, 4)) -> None:
        super().__init__()
        self.bin_sizes = [int(b) for b in bin_sizes]
        self.stages = nn.LayerList([ConvBNReLU(in_channels, inter_channels, 1) for _ in self.bin_sizes])
        self.conv_out = ConvBNReLU(inter_channels, out_channels, 3)

    def forward(self, x):
        size = x.shape[2:]
        out = None
        for bins, stage in zip(self.bin_sizes, self.stages, strict=True):
            y = _resize(stage(F.adaptive_avg_pool2d(x, bins)), size)
            out = y if out is None else out + y
        return self.conv_out(out)


class UAFM(nn.Layer):
    """Spatial-attention fusion of a deep (``high``) and a shallow (``low``) feature."""

    def __init__(self, low_channels: int, high_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv_x = ConvBNReLU(low_channels, high_channels, 3)
        self.conv_out = ConvBNReLU(high_channels, out_channels, 3)
        self.conv_atten = nn.Sequential(ConvBNReLU(4, 2, 3), ConvBN(2, 1, 3))

    def forward(self, low, high):
        x = self.conv_x(low)
        y = _resize(high, x.shape[2:])
        stats = [paddle.mean(x, axis=1, keepdim=True), paddle.max(x, axis=1, keepdim=True),
                 paddle.mean(y, axis=1, keepdim=True), paddle.max(y, axis=1, keepdim=True)]  # fmt: skip
        atten = F.sigmoid(self.conv_atten(paddle.concat(stats, axis=1)))
        return self.conv_out(x * atten + y * (1 - atten))


class SegHead(nn.Layer):
    def __init__(self, in_channels: int, mid_channels: int, num_classes: int) -> None:
        super().__init__()
        self.conv = ConvBNReLU(in_channels, mid_channels, 3)
        self.conv_out = nn.Conv2D(mid_channels, num_classes, 1)

    def forward(self, x):
        return self.conv_out(self.conv(x))


class PPLiteSeg(nn.Layer):
    """``num_classes`` logits at the input size; ``backbone_indices`` pick three backbone maps
    (strides 8, 16, 32 by default), fused deepest first into ``arm_out_chs`` channels."""

    def __init__(self, num_classes: int, in_channels: int = 3, backbone: dict | None = None,
                 backbone_indices=(2, 3, 4), cm_bin_sizes=(1, 2, 4), cm_out_ch: int = 128,
                 arm_out_chs=(64, 96, 128), seg_head_inter_chs=(64, 64, 64)) -> None:  # fmt: skip
        super().__init__()
        settings = dict(backbone or {})
        if settings.pop("name", "STDCNet") != "STDCNet":
            raise ConfigError("Architecture.backbone.name must be STDCNet (PP-LiteSeg's encoder)")
        self.backbone = STDCNet(in_channels=in_channels, **settings)
        indices = list(backbone_indices)
        if len(indices) != len(arm_out_chs) or len(arm_out_chs) != len(seg_head_inter_chs) or not indices:
            raise ConfigError("backbone_indices, arm_out_chs and seg_head_inter_chs must have one entry per level")
        if any(not 0 <= i < len(self.backbone.feat_channels) for i in indices):
            raise ConfigError(f"backbone_indices {indices} must index the backbone's 5 feature maps (0..4)")
        self.indices = indices
        channels = [self.backbone.feat_channels[i] for i in indices]
        self.sppm = SPPM(channels[-1], cm_out_ch, cm_out_ch, cm_bin_sizes)
        arms, high = [], cm_out_ch
        for low, out in reversed(list(zip(channels, arm_out_chs, strict=True))):
            arms.append(UAFM(low, high, out))
            high = out
        self.arms = nn.LayerList(arms)  # deepest level first
        heads = [SegHead(c, m, num_classes) for c, m in zip(arm_out_chs, seg_head_inter_chs, strict=True)]
        self.heads = nn.LayerList(heads)  # finest level first, as arm_out_chs

    def forward(self, x):
        size = x.shape[2:]
        feats = self.backbone(x)
        feats = [feats[i] for i in self.indices]
        high = self.sppm(feats[-1])
        fused = []
        for arm, low in zip(self.arms, reversed(feats), strict=True):
            high = arm(low, high)
            fused.insert(0, high)
        if not self.training:
            return _resize(self.heads[0](fused[0]), size)
        return [_resize(head(f), size) for head, f in zip(self.heads, fused, strict=True)]
