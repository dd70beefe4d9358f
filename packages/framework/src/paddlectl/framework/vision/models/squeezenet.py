"""SqueezeNet 1.0 and 1.1 in Paddle's structure and parameter names. The classifier is a 1x1
convolution (``_conv9``); ``with_pool`` adds ReLU, global average pool and the squeeze to [N, classes]."""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ...nn import functional as F
from ...ops.shape import concat, flatten
from ._weights import factory

# Fire modules (in, squeeze, expand 1x1, expand 3x3); both versions share them.
FIRES = [
    (None, 16, 64, 64),
    (128, 16, 64, 64),
    (128, 32, 128, 128),
    (256, 32, 128, 128),
    (256, 48, 192, 192),
    (384, 48, 192, 192),
    (384, 64, 256, 256),
    (512, 64, 256, 256),
]
# version -> (stem conv (out, kernel, padding), Fire modules after which a max pool follows)
VERSIONS = {"1.0": ((96, 7, 0), (3, 7)), "1.1": ((64, 3, 1), (2, 4))}


class MakeFireConv(nn.Layer):
    def __init__(self, input_channels, output_channels, filter_size, padding=0) -> None:
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x):
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """Squeeze to few channels with 1x1, expand with 1x1 and 3x3 side by side."""

    def __init__(self, input_channels, squeeze_channels, expand1x1_channels, expand3x3_channels) -> None:
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, x):
        x = self._conv(x)
        return concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


class SqueezeNet(nn.Layer):
    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if version not in VERSIONS:
            raise ConfigError(f"SqueezeNet: version must be one of {sorted(VERSIONS)}, got {version!r}")
        self.version, self.num_classes, self.with_pool = version, num_classes, with_pool
        (stem, kernel, padding), self._pool_after = VERSIONS[version]
        self._conv = nn.Conv2D(3, stem, kernel, stride=2, padding=padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        for i, (cin, *widths) in enumerate(FIRES, start=1):
            setattr(self, f"_conv{i}", MakeFire(cin or stem, *widths))
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        if num_classes > 0:  # Paddle keeps an empty [0, 512, 1, 1] `_conv9` here; ours has none
            self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, x):
        x = self._pool(F.relu(self._conv(x)))
        for i in range(1, len(FIRES) + 1):
            x = getattr(self, f"_conv{i}")(x)
            if i in self._pool_after:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = flatten(self._avg_pool(F.relu(x)), 1)  # [N, C, 1, 1]: Paddle squeezes
        return x


squeezenet1_0 = factory("squeezenet1_0", SqueezeNet, version="1.0")
squeezenet1_1 = factory("squeezenet1_1", SqueezeNet, version="1.1")
