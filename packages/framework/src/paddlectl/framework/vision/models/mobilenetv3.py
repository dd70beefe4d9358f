"""MobileNetV3 Small and Large in Paddle's structure and parameter names (BatchNorm epsilon 1e-3,
momentum 0.99)."""

from __future__ import annotations

from functools import partial

from ... import nn
from ._layers import ConvNormActivation, make_divisible, pool_and_classify
from ._weights import refuse_download


class SqueezeExcitation(nn.Layer):
    def __init__(self, channels: int, squeeze_channels: int) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class InvertedResidual(nn.Layer):
    def __init__(self, in_ch, expanded, out_ch, kernel, stride, use_se, activation, norm_layer) -> None:
        super().__init__()
        self.use_res_connect = stride == 1 and in_ch == out_ch
        self.use_se = use_se
        self.expand = in_ch != expanded
        if self.expand:
            self.expand_conv = ConvNormActivation(
                in_ch, expanded, 1, 1, 0, norm_layer=norm_layer, activation_layer=activation
            )
        self.bottleneck_conv = ConvNormActivation(
            expanded,
            expanded,
            kernel,
            stride,
            (kernel - 1) // 2,
            groups=expanded,
            norm_layer=norm_layer,
            activation_layer=activation,
        )
        if use_se:
            self.mid_se = SqueezeExcitation(expanded, make_divisible(expanded // 4))
        self.linear_conv = ConvNormActivation(expanded, out_ch, 1, 1, 0, norm_layer=norm_layer, activation_layer=None)

    def forward(self, x):
        out = self.expand_conv(x) if self.expand else x
        out = self.bottleneck_conv(out)
        if self.use_se:
            out = self.mid_se(out)
        out = self.linear_conv(out)
        return x + out if self.use_res_connect else out


# (in, kernel, expanded, out, squeeze-excite, activation, stride) per block, before width scaling.
SMALL_BLOCKS = [
    (16, 3, 16, 16, True, "relu", 2),
    (16, 3, 72, 24, False, "relu", 2),
    (24, 3, 88, 24, False, "relu", 1),
    (24, 5, 96, 40, True, "hardswish", 2),
    (40, 5, 240, 40, True, "hardswish", 1),
    (40, 5, 240, 40, True, "hardswish", 1),
    (40, 5, 120, 48, True, "hardswish", 1),
    (48, 5, 144, 48, True, "hardswish", 1),
    (48, 5, 288, 96, True, "hardswish", 2),
    (96, 5, 576, 96, True, "hardswish", 1),
    (96, 5, 576, 96, True, "hardswish", 1),
]
LARGE_BLOCKS = [
    (16, 3, 16, 16, False, "relu", 1),
    (16, 3, 64, 24, False, "relu", 2),
    (24, 3, 72, 24, False, "relu", 1),
    (24, 5, 72, 40, True, "relu", 2),
    (40, 5, 120, 40, True, "relu", 1),
    (40, 5, 120, 40, True, "relu", 1),
    (40, 3, 240, 80, False, "hardswish", 2),
    (80, 3, 200, 80, False, "hardswish", 1),
    (80, 3, 184, 80, False, "hardswish", 1),
    (80, 3, 184, 80, False, "hardswish", 1),
    (80, 3, 480, 112, True, "hardswish", 1),
    (112, 3, 672, 112, True, "hardswish", 1),
    (112, 5, 672, 160, True, "hardswish", 2),
    (160, 5, 960, 160, True, "hardswish", 1),
    (160, 5, 960, 160, True, "hardswish", 1),
]


class MobileNetV3(nn.Layer):
    """The body both sizes share: ``blocks`` is a table as above, ``last_channel`` the classifier's
    hidden width before scaling."""

    def __init__(self, blocks, last_channel: int, scale: float, num_classes: int, with_pool: bool) -> None:
        super().__init__()
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        norm = partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
        acts = {"relu": nn.ReLU, "hardswish": nn.Hardswish}
        ch = lambda c: make_divisible(c * scale)  # noqa: E731
        blocks = [(ch(i), k, ch(e), ch(o), se, acts[a], s) for i, k, e, o, se, a, s in blocks]
        self.conv = ConvNormActivation(3, blocks[0][0], 3, 2, 1, norm_layer=norm, activation_layer=nn.Hardswish)
        self.blocks = nn.Sequential(*[InvertedResidual(i, e, o, k, s, se, a, norm) for i, k, e, o, se, a, s in blocks])
        last_in = blocks[-1][0]
        self.lastconv_out_channels = last_in * 6
        self.lastconv = ConvNormActivation(
            last_in, self.lastconv_out_channels, 1, 1, 0, norm_layer=norm, activation_layer=nn.Hardswish
        )
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.last_channel = make_divisible(last_channel * scale)
            self.classifier = nn.Sequential(
                nn.Linear(self.lastconv_out_channels, self.last_channel),
                nn.Hardswish(),
                nn.Dropout(p=0.2),
                nn.Linear(self.last_channel, num_classes),
            )

    def forward(self, x):
        x = self.lastconv(self.blocks(self.conv(x)))
        return pool_and_classify(self, x, "avgpool", "classifier")


class MobileNetV3Small(MobileNetV3):
    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__(SMALL_BLOCKS, 1024, scale, num_classes, with_pool)


class MobileNetV3Large(MobileNetV3):
    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__(LARGE_BLOCKS, 1280, scale, num_classes, with_pool)


def mobilenet_v3_small(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV3Small:
    refuse_download("mobilenet_v3_small", pretrained)
    return MobileNetV3Small(scale=scale, **kwargs)


def mobilenet_v3_large(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV3Large:
    refuse_download("mobilenet_v3_large", pretrained)
    return MobileNetV3Large(scale=scale, **kwargs)
