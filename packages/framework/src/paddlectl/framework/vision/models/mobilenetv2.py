"""MobileNetV2 in Paddle's structure and parameter names (inverted residuals with ReLU6)."""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ._layers import ConvNormActivation, make_divisible, pool_and_classify
from ._weights import refuse_download

# (expansion t, output channels c, repeats n, first stride s) per stage, before width scaling.
STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class InvertedResidual(nn.Layer):
    """Optional 1x1 expansion, 3x3 depthwise, linear 1x1 projection; a shortcut when shapes allow."""

    def __init__(self, inp, oup, stride, expand_ratio, norm_layer=nn.BatchNorm2D) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ConfigError(f"InvertedResidual: stride must be 1 or 2, got {stride!r}")
        self.stride = stride
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvNormActivation(inp, hidden, 1, norm_layer=norm_layer, activation_layer=nn.ReLU6))
        layers += [
            ConvNormActivation(
                hidden, hidden, stride=stride, groups=hidden, norm_layer=norm_layer, activation_layer=nn.ReLU6
            ),
            nn.Conv2D(hidden, oup, 1, 1, 0, bias_attr=False),
            norm_layer(oup),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Layer):
    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        channels = make_divisible(32 * scale)
        self.last_channel = make_divisible(1280 * max(1.0, scale))
        features = [ConvNormActivation(3, channels, stride=2, activation_layer=nn.ReLU6)]
        for t, c, n, s in STAGES:
            out = make_divisible(c * scale)
            for i in range(n):
                features.append(InvertedResidual(channels, out, s if i == 0 else 1, expand_ratio=t))
                channels = out
        features.append(ConvNormActivation(channels, self.last_channel, kernel_size=1, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, num_classes))

    def forward(self, x):
        x = self.features(x)
        return pool_and_classify(self, x, "pool2d_avg", "classifier")


def mobilenet_v2(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV2:
    refuse_download(f"mobilenet_v2(scale={scale})", pretrained)
    return MobileNetV2(scale=scale, **kwargs)
