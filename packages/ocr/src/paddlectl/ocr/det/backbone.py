"""MobileNetV3 as PaddleOCR's detectors use it: four feature maps at strides 4, 8, 16 and 32.

The blocks, tables and widths are the recogniser's (``rec.mobilenet_v3``; PaddleOCR shares them
the same way); detection strides both axes at every stride-2 block and cuts the blocks into
stages: a new stage starts at each stride-2 block after the stem (after block 2 for "large",
block 0 for "small"), and the last stage ends in the 1x1 "squeeze" convolution.
"""

from __future__ import annotations

from paddlectl.framework import nn

from ..rec.mobilenet_v3 import ConvBNLayer, ResidualUnit, make_divisible, variant

FIRST_SPLIT = {"large": 3, "small": 1}
"""The first block that may open a stage (PaddleOCR's ``start_idx`` + 1)."""
DET_STRIDE_2 = {"large": {6}, "small": set()}
"""Blocks PaddleOCR's detection table strides that the recogniser's keeps at stride 1 (the 80-wide
"large" block): five stride-2 steps in all, to stride 32."""


class MobileNetV3(nn.Layer):
    """The detection backbone; ``forward`` returns the four stage outputs, ``out_channels`` their widths."""

    def __init__(self, in_channels: int = 3, model_name: str = "large", scale: float = 0.5, disable_se: bool = False):
        super().__init__()
        blocks, last, strides = variant(model_name, scale)
        inplanes = make_divisible(16 * scale)
        self.conv = ConvBNLayer(in_channels, inplanes, 3, 2, act="hardswish")
        stages, current, self.out_channels = [], [], []
        for i, (k, exp, c, se, act, stage) in enumerate(blocks):
            s = 2 if i in DET_STRIDE_2[model_name] else (1 if stage is None else strides[stage])
            if s == 2 and i >= FIRST_SPLIT[model_name]:
                self.out_channels.append(inplanes)
                stages.append(nn.Sequential(*current))
                current = []
            out = make_divisible(scale * c)
            current.append(ResidualUnit(inplanes, make_divisible(scale * exp), out, k, s, se and not disable_se, act))
            inplanes = out
        current.append(ConvBNLayer(inplanes, make_divisible(scale * last), 1, 1, act="hardswish"))
        stages.append(nn.Sequential(*current))
        self.out_channels.append(make_divisible(scale * last))
        self.stages = nn.LayerList(stages)

    def forward(self, x):
        x = self.conv(x)
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features
