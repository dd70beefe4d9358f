"""VGG 11/13/16/19, with or without batch norm, in Paddle's structure and parameter names."""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ._layers import pool_and_classify
from ._weights import refuse_download

# Output channels per 3x3 convolution, "M" a 2x2 max pool: Paddle's configurations A, B, D, E.
CONFIGS = {
    11: [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    13: [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    16: [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    19: [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Layer):
    """``features`` (see ``make_layers``) then a 7x7 adaptive pool and three fully connected layers."""

    def __init__(self, features: nn.Layer, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if not isinstance(features, nn.Layer):
            raise ConfigError(f"VGG: features must be a Layer (build it with make_layers), got {features!r}")
        self.features = features
        self.num_classes, self.with_pool = num_classes, with_pool
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((7, 7))
        if num_classes > 0:
            self.classifier = nn.Sequential(
                nn.Linear(512 * 7 * 7, 4096),
                nn.ReLU(),
                nn.Dropout(),
                nn.Linear(4096, 4096),
                nn.ReLU(),
                nn.Dropout(),
                nn.Linear(4096, num_classes),
            )

    def forward(self, x):
        x = self.features(x)
        return pool_and_classify(self, x, "avgpool", "classifier")


def make_layers(cfg, batch_norm: bool = False) -> nn.Sequential:
    """The convolutional trunk for one configuration list (ints: 3x3 conv channels, "M": max pool)."""
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2D(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2D(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2D(v))
        layers.append(nn.ReLU())
        in_channels = v
    return nn.Sequential(*layers)


def _vgg(depth: int, pretrained: bool, batch_norm: bool, kwargs) -> VGG:
    refuse_download(f"vgg{depth}{'_bn' if batch_norm else ''}", pretrained)
    return VGG(make_layers(CONFIGS[depth], batch_norm=batch_norm), **kwargs)


def vgg11(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    return _vgg(11, pretrained, batch_norm, kwargs)


def vgg13(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    return _vgg(13, pretrained, batch_norm, kwargs)


def vgg16(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    return _vgg(16, pretrained, batch_norm, kwargs)


def vgg19(pretrained: bool = False, batch_norm: bool = False, **kwargs) -> VGG:
    return _vgg(19, pretrained, batch_norm, kwargs)
