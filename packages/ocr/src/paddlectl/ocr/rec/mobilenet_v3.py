"""MobileNetV3 as PaddleOCR's recogniser uses it (``rec_mobilenet_v3``): the usual inverted residual
blocks with squeeze-excitation, but the stage strides halve only the height (``(s, 1)``), so a
text line keeps a long column sequence for CTC; a final 2x2 max-pool leaves height 1 for 32/48
pixel lines. ``full_stride=True`` strides both axes (the direction classifier's backbone).

``masked_se=True`` makes squeeze-excitation average only a line's own columns, not the zero
padding to its right: otherwise a line's channel weights depend on how much padding it came with,
and a model trained on width-bucketed batches (little padding, ``rec.batching``) reads the fixed
320-pixel serving width badly (accuracy 0.13 against 0.37 at the line's own width, one epoch)."""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F

# kernel, expansion, out channels, squeeze-excitation, activation, stride (index into the stride list or 1)
SMALL = [
    (3, 16, 16, True, "relu", 0),
    (3, 72, 24, False, "relu", 1),
    (3, 88, 24, False, "relu", None),
    (5, 96, 40, True, "hardswish", 2),
    (5, 240, 40, True, "hardswish", None),
    (5, 240, 40, True, "hardswish", None),
    (5, 120, 48, True, "hardswish", None),
    (5, 144, 48, True, "hardswish", None),
    (5, 288, 96, True, "hardswish", 3),
    (5, 576, 96, True, "hardswish", None),
    (5, 576, 96, True, "hardswish", None),
]
LARGE = [
    (3, 16, 16, False, "relu", 0),
    (3, 64, 24, False, "relu", 1),
    (3, 72, 24, False, "relu", None),
    (5, 72, 40, True, "relu", 2),
    (5, 120, 40, True, "relu", None),
    (5, 120, 40, True, "relu", None),
    (3, 240, 80, False, "hardswish", None),
    (3, 200, 80, False, "hardswish", None),
    (3, 184, 80, False, "hardswish", None),
    (3, 184, 80, False, "hardswish", None),
    (3, 480, 112, True, "hardswish", None),
    (3, 672, 112, True, "hardswish", None),
    (5, 672, 160, True, "hardswish", 3),
    (5, 960, 160, True, "hardswish", None),
    (5, 960, 160, True, "hardswish", None),
]
CONFIGS = {"small": (SMALL, 576, [2, 2, 2, 2]), "large": (LARGE, 960, [1, 2, 2, 2])}
SCALES = (0.35, 0.5, 0.75, 1.0, 1.25)


def variant(model_name: str, scale: float) -> tuple[list, int, list[int]]:
    """``CONFIGS[model_name]`` (blocks, squeeze width, default strides), with ``model_name`` and
    ``scale`` checked: every MobileNetV3 of the suite (rec, cls, det) takes the same ones."""
    if model_name not in CONFIGS:
        raise ConfigError(f"MobileNetV3.model_name is {model_name!r}; choose small or large")
    if scale not in SCALES:
        raise ConfigError(f"MobileNetV3.scale is {scale!r}; choose from {', '.join(map(str, SCALES))}")
    return CONFIGS[model_name]


def make_divisible(value: float, divisor: int = 8) -> int:
    """Channels rounded to a multiple of 8, never more than 10% below ``value`` (MobileNet's rule)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvBNLayer(nn.Layer):
    """Conv (no bias) -> BatchNorm -> optional activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, groups=1, act=None) -> None:
        super().__init__()
        padding = (kernel_size - 1) // 2
        self.conv = nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, groups=groups, bias_attr=False)
        self.bn = nn.BatchNorm2D(out_channels)
        self.act = {"relu": nn.ReLU, "hardswish": nn.Hardswish, None: nn.Identity}[act]()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SEModule(nn.Layer):
    """Squeeze-excitation with PaddleOCR's hard sigmoid (slope 0.2, offset 0.5)."""

    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.conv1 = nn.Conv2D(channels, channels // reduction, 1)
        self.conv2 = nn.Conv2D(channels // reduction, channels, 1)

    def forward(self, x, columns=None):
        """``columns`` [B, 1, 1, W]: 1 where a line has its own columns, 0 on padding (None: all)."""
        if columns is None:
            pooled = self.pool(x)
        else:
            count = paddle.clip(paddle.sum(columns, axis=[2, 3], keepdim=True), min=1.0) * x.shape[2]
            pooled = paddle.sum(x * columns, axis=[2, 3], keepdim=True) / count
        weight = F.hardsigmoid(self.conv2(F.relu(self.conv1(pooled))), slope=0.2, offset=0.5)
        return x * weight


class ResidualUnit(nn.Layer):
    """Expand 1x1 -> depthwise kxk (strided) -> optional SE -> project 1x1; identity shortcut when
    the shape is kept."""

    def __init__(self, in_channels, mid_channels, out_channels, kernel_size, stride, use_se, act) -> None:
        super().__init__()
        self.shortcut = stride == 1 and in_channels == out_channels
        self.expand = ConvBNLayer(in_channels, mid_channels, 1, 1, act=act)
        self.depthwise = ConvBNLayer(mid_channels, mid_channels, kernel_size, stride, groups=mid_channels, act=act)
        self.se = SEModule(mid_channels) if use_se else None
        self.project = ConvBNLayer(mid_channels, out_channels, 1, 1)

    def forward(self, inputs, columns=None):
        x = self.depthwise(self.expand(inputs))
        if self.se is not None:
            x = self.se(x, columns)
        x = self.project(x)
        return inputs + x if self.shortcut else x


class MobileNetV3(nn.Layer):
    """``model_name`` small/large at ``scale``; ``small_stride``/``large_stride`` are the four stage
    strides (PaddleOCR's keys; the rec configs use [1, 2, 2, 2] for 32-pixel lines)."""

    def __init__(
        self,
        in_channels: int = 3,
        model_name: str = "small",
        scale: float = 0.5,
        small_stride: list[int] | None = None,
        large_stride: list[int] | None = None,
        disable_se: bool = False,
        full_stride: bool = False,
        masked_se: bool = False,
    ) -> None:
        super().__init__()
        if masked_se and full_stride:
            raise ConfigError("MobileNetV3.masked_se needs the rec strides (full_stride false): they keep the columns")
        self.masked_se = bool(masked_se)
        cfg, squeeze, default = variant(model_name, scale)
        strides = (small_stride if model_name == "small" else large_stride) or default
        if not (isinstance(strides, list) and len(strides) == 4 and all(s in (1, 2) for s in strides)):
            raise ConfigError(f"MobileNetV3 {model_name}_stride must be four strides of 1 or 2, got {strides!r}")
        channels = make_divisible(16 * scale)
        self.conv1 = ConvBNLayer(in_channels, channels, 3, 2, act="hardswish")
        blocks = []
        for kernel, expansion, out, se, act, stage in cfg:
            s = 1 if stage is None else strides[stage]
            stride = s if full_stride or s == 1 else (s, 1)
            out = make_divisible(scale * out)
            blocks.append(
                ResidualUnit(
                    channels, make_divisible(scale * expansion), out, kernel, stride, se and not disable_se, act
                )
            )
            channels = out
        self.blocks = nn.Sequential(*blocks)
        self.out_channels = make_divisible(scale * squeeze)
        self.conv2 = ConvBNLayer(channels, self.out_channels, 1, 1, act="hardswish")
        self.pool = nn.Identity() if full_stride else nn.MaxPool2D(kernel_size=2, stride=2)

    def forward(self, x):
        if not self.masked_se:
            return self.pool(self.conv2(self.blocks(self.conv1(x))))
        # a column is padding where every channel and row is exactly 0 (a resized uint8 line never
        # is: 0 is grey 127.5); conv1 halves the width, the blocks keep it
        inked = paddle.cast(paddle.any(x != 0, axis=[1, 2], keepdim=True), x.dtype)
        columns = F.max_pool2d(inked, kernel_size=[1, 2], stride=[1, 2], ceil_mode=True)
        x = self.conv1(x)
        for block in self.blocks:
            x = block(x, columns)
        return self.pool(self.conv2(x))


__all__ = ["ConvBNLayer", "MobileNetV3", "make_divisible", "variant"]
