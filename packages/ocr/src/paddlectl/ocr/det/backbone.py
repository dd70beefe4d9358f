"""MobileNetV3 as PaddleOCR's detectors use it: four feature maps at strides 4, 8, 16 and 32.

Same blocks, widths and layer names as PaddleOCR's ``det_mobilenet_v3`` (``conv``, ``stages.N``,
``expand_conv``/``bottleneck_conv``/``mid_se``/``linear_conv``), so a ``det_mv3_db.yml``
architecture section builds the same network: a new stage starts at every stride-2 block after
the stem blocks, and the last stage ends in the 1x1 "squeeze" convolution.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError

# kernel, expanded channels, output channels, squeeze-excite, activation, stride (PaddleOCR's tables).
LARGE = [
    (3, 16, 16, False, "relu", 1),
    (3, 64, 24, False, "relu", 2),
    (3, 72, 24, False, "relu", 1),
    (5, 72, 40, True, "relu", 2),
    (5, 120, 40, True, "relu", 1),
    (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hardswish", 2),
    (3, 200, 80, False, "hardswish", 1),
    (3, 184, 80, False, "hardswish", 1),
    (3, 184, 80, False, "hardswish", 1),
    (3, 480, 112, True, "hardswish", 1),
    (3, 672, 112, True, "hardswish", 1),
    (5, 672, 160, True, "hardswish", 2),
    (5, 960, 160, True, "hardswish", 1),
    (5, 960, 160, True, "hardswish", 1),
]
SMALL = [
    (3, 16, 16, True, "relu", 2),
    (3, 72, 24, False, "relu", 2),
    (3, 88, 24, False, "relu", 1),
    (5, 96, 40, True, "hardswish", 2),
    (5, 240, 40, True, "hardswish", 1),
    (5, 240, 40, True, "hardswish", 1),
    (5, 120, 48, True, "hardswish", 1),
    (5, 144, 48, True, "hardswish", 1),
    (5, 288, 96, True, "hardswish", 2),
    (5, 576, 96, True, "hardswish", 1),
    (5, 576, 96, True, "hardswish", 1),
]
# name -> (blocks, last 1x1 width, index of the first block that may open a stage)
MODELS = {"large": (LARGE, 960, 3), "small": (SMALL, 576, 1)}
SCALES = (0.35, 0.5, 0.75, 1.0, 1.25)
ACTIVATIONS = {"relu": nn.ReLU, "hardswish": nn.Hardswish}


def make_divisible(value: float, divisor: int = 8) -> int:
    """Channels rounded to a multiple of ``divisor``, never more than 10% below ``value``."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvBNLayer(nn.Layer):
    """Conv (no bias) -> BatchNorm -> optional activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, groups=1, act=None) -> None:
        super().__init__()
        self.conv = nn.Conv2D(
            in_channels, out_channels, kernel_size, stride, (kernel_size - 1) // 2, groups=groups, bias_attr=False
        )
        self.bn = nn.BatchNorm2D(out_channels)
        self.act = ACTIVATIONS[act]() if act else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        return self.act(x) if self.act is not None else x


class SEModule(nn.Layer):
    """Squeeze-excite with PaddleOCR's gate: hardsigmoid(slope 0.2, offset 0.5), a quarter of the channels."""

    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(channels, channels // reduction, 1)
        self.conv2 = nn.Conv2D(channels // reduction, channels, 1)

    def forward(self, x):
        gate = self.conv2(paddle.nn.functional.relu(self.conv1(self.avg_pool(x))))
        return x * paddle.nn.functional.hardsigmoid(gate, slope=0.2, offset=0.5)


class ResidualUnit(nn.Layer):
    """Inverted residual: 1x1 expand -> depthwise k x k -> (SE) -> 1x1 linear, with a shortcut at stride 1."""

    def __init__(self, in_channels, mid_channels, out_channels, kernel_size, stride, use_se, act) -> None:
        super().__init__()
        self.shortcut = stride == 1 and in_channels == out_channels
        self.expand_conv = ConvBNLayer(in_channels, mid_channels, 1, 1, act=act)
        self.bottleneck_conv = ConvBNLayer(mid_channels, mid_channels, kernel_size, stride, mid_channels, act)
        self.mid_se = SEModule(mid_channels) if use_se else None
        self.linear_conv = ConvBNLayer(mid_channels, out_channels, 1, 1)

    def forward(self, inputs):
        x = self.bottleneck_conv(self.expand_conv(inputs))
        if self.mid_se is not None:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        return inputs + x if self.shortcut else x


class MobileNetV3(nn.Layer):
    """The detection backbone; ``forward`` returns the four stage outputs, ``out_channels`` their widths."""

    def __init__(self, in_channels: int = 3, model_name: str = "large", scale: float = 0.5, disable_se: bool = False):
        super().__init__()
        if model_name not in MODELS:
            raise ConfigError(f"Backbone.model_name is {model_name!r}; choose from {', '.join(MODELS)}")
        if scale not in SCALES:
            raise ConfigError(f"Backbone.scale is {scale!r}; PaddleOCR's MobileNetV3 takes one of {SCALES}")
        blocks, last, first_split = MODELS[model_name]
        inplanes = make_divisible(16 * scale)
        self.conv = ConvBNLayer(in_channels, inplanes, 3, 2, act="hardswish")
        stages, current, self.out_channels = [], [], []
        for i, (k, exp, c, se, act, s) in enumerate(blocks):
            if s == 2 and i >= first_split:
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
