"""Inception v3 in Paddle's structure and parameter names. Paddle's port has no auxiliary classifier:
``forward`` returns the logits only (or the 2048-channel map with ``num_classes <= 0``). Every
convolution is ConvNormActivation (conv, BatchNorm, ReLU); inputs from 75x75 up are accepted."""

from __future__ import annotations

import math

from ... import nn
from ...ops.shape import concat, reshape
from ._layers import ConvNormActivation
from ._weights import factory


def _cna(in_channels, out_channels, kernel_size, stride=1, padding=0) -> ConvNormActivation:
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride, padding)


def _avg_pool() -> nn.AvgPool2D:
    """The branches' 3x3 average pool: padding counts in the mean (``exclusive=False``), as in Paddle."""
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


class InceptionStem(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.conv_1a_3x3 = _cna(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _cna(32, 32, 3)
        self.conv_2b_3x3 = _cna(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _cna(64, 80, 1)
        self.conv_4a_3x3 = _cna(80, 192, 3)

    def forward(self, x):
        x = self.max_pool(self.conv_2b_3x3(self.conv_2a_3x3(self.conv_1a_3x3(x))))
        return self.max_pool(self.conv_4a_3x3(self.conv_3b_1x1(x)))


class InceptionA(nn.Layer):
    def __init__(self, num_channels, pool_features) -> None:
        super().__init__()
        self.branch1x1 = _cna(num_channels, 64, 1)
        self.branch5x5_1 = _cna(num_channels, 48, 1)
        self.branch5x5_2 = _cna(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _cna(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cna(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cna(96, 96, 3, padding=1)
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _cna(num_channels, pool_features, 1)

    def forward(self, x):
        branches = [
            self.branch1x1(x),
            self.branch5x5_2(self.branch5x5_1(x)),
            self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
            self.branch_pool_conv(self.branch_pool(x)),
        ]
        return concat(branches, axis=1)


class InceptionB(nn.Layer):
    """Grid reduction 35 -> 17."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch3x3 = _cna(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _cna(num_channels, 64, 1)
        self.branch3x3dbl_2 = _cna(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _cna(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        branches = [
            self.branch3x3(x),
            self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
            self.branch_pool(x),
        ]
        return concat(branches, axis=1)


class InceptionC(nn.Layer):
    """Factorised 7x7 convolutions (1x7 then 7x1)."""

    def __init__(self, num_channels, channels_7x7) -> None:
        super().__init__()
        c = channels_7x7
        self.branch1x1 = _cna(num_channels, 192, 1)
        self.branch7x7_1 = _cna(num_channels, c, 1)
        self.branch7x7_2 = _cna(c, c, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _cna(c, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _cna(num_channels, c, 1)
        self.branch7x7dbl_2 = _cna(c, c, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _cna(c, c, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _cna(c, c, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _cna(c, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _cna(num_channels, 192, 1)

    def forward(self, x):
        dbl = self.branch7x7dbl_3(self.branch7x7dbl_2(self.branch7x7dbl_1(x)))
        branches = [
            self.branch1x1(x),
            self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x))),
            self.branch7x7dbl_5(self.branch7x7dbl_4(dbl)),
            self.branch_pool_conv(self.branch_pool(x)),
        ]
        return concat(branches, axis=1)


class InceptionD(nn.Layer):
    """Grid reduction 17 -> 8."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch3x3_1 = _cna(num_channels, 192, 1)
        self.branch3x3_2 = _cna(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _cna(num_channels, 192, 1)
        self.branch7x7x3_2 = _cna(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _cna(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _cna(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x):
        seven = self.branch7x7x3_2(self.branch7x7x3_1(x))
        branches = [
            self.branch3x3_2(self.branch3x3_1(x)),
            self.branch7x7x3_4(self.branch7x7x3_3(seven)),
            self.branch_pool(x),
        ]
        return concat(branches, axis=1)


class InceptionE(nn.Layer):
    """Expanded filter bank: 1x3 and 3x1 side by side."""

    def __init__(self, num_channels) -> None:
        super().__init__()
        self.branch1x1 = _cna(num_channels, 320, 1)
        self.branch3x3_1 = _cna(num_channels, 384, 1)
        self.branch3x3_2a = _cna(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _cna(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _cna(num_channels, 448, 1)
        self.branch3x3dbl_2 = _cna(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _cna(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _cna(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _avg_pool()
        self.branch_pool_conv = _cna(num_channels, 192, 1)

    def forward(self, x):
        three = self.branch3x3_1(x)
        dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        branches = [
            self.branch1x1(x),
            self.branch3x3_2a(three),
            self.branch3x3_2b(three),
            self.branch3x3dbl_3a(dbl),
            self.branch3x3dbl_3b(dbl),
            self.branch_pool_conv(self.branch_pool(x)),
        ]
        return concat(branches, axis=1)


class InceptionV3(nn.Layer):
    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        self.inception_stem = InceptionStem()
        blocks = [InceptionA(c, p) for c, p in ((192, 32), (256, 64), (288, 64))]
        blocks.append(InceptionB(288))
        blocks += [InceptionC(768, c) for c in (128, 160, 160, 192)]
        blocks.append(InceptionD(768))
        blocks += [InceptionE(c) for c in (1280, 2048)]
        self.inception_block_list = nn.LayerList(blocks)
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            bound = 1.0 / math.sqrt(2048.0)
            self.fc = nn.Linear(2048, num_classes, weight_attr=nn.initializer.Uniform(-bound, bound))

    def forward(self, x):
        x = self.inception_stem(x)
        for block in self.inception_block_list:
            x = block(x)
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(reshape(x, [-1, 2048])))
        return x


inception_v3 = factory("inception_v3", InceptionV3)
