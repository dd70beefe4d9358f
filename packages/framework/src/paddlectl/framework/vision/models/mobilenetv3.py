"""MobileNetV3 Small and Large in Paddle's structure and parameter names (BatchNorm epsilon 1e-3,
momentum 0.99)."""

from __future__ import annotations

from functools import partial

from ... import nn
from ._layers import ConvNormActivation, make_divisible, pool_and_classify
from ._weights import refuse_download


class SqueezeExcitation(nn.Layer):
    """Channel gates from the global average: 1x1 down, ``activation``, 1x1 up, ``scale_activation``."""

    def __init__(self, input_channels, squeeze_channels, activation=nn.ReLU, scale_activation=nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class InvertedResidual(nn.Layer):
    def __init__(
        self, in_channels, expanded_channels, out_channels, filter_size, stride, use_se, activation_layer, norm_layer
    ) -> None:
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        # every convolution here shares the norm; the linear one has no activation
        unit = partial(ConvNormActivation, norm_layer=norm_layer, activation_layer=activation_layer)
        if self.expand:
            self.expand_conv = unit(in_channels, expanded_channels, 1, 1, 0)
        self.bottleneck_conv = unit(
            expanded_channels, expanded_channels, filter_size, stride, (filter_size - 1) // 2, groups=expanded_channels
        )
        if use_se:
            squeeze = make_divisible(expanded_channels // 4)
            self.mid_se = SqueezeExcitation(expanded_channels, squeeze, scale_activation=nn.Hardsigmoid)
        self.linear_conv = unit(expanded_channels, out_channels, 1, 1, 0, activation_layer=None)

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
