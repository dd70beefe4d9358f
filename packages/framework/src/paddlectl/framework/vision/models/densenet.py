"""DenseNet 121/161/169/201/264 in Paddle's structure and parameter names (Paddle's port keeps the
static-graph era names: ``conv1_func``, ``db_conv_2.conv2_1.bn_ac_func1._batch_norm``...)."""

from __future__ import annotations

import math

from ... import nn
from ...errors import ConfigError
from ...ops.shape import concat
from ._layers import pool_and_classify
from ._weights import factory

# layers -> (initial features, growth rate, dense layers per block)
SPECS = {
    121: (64, 32, (6, 12, 24, 16)),
    161: (96, 48, (6, 12, 36, 24)),
    169: (64, 32, (6, 12, 32, 32)),
    201: (64, 32, (6, 12, 48, 32)),
    264: (64, 32, (6, 12, 64, 48)),
}


class BNACConvLayer(nn.Layer):
    """Pre-activation unit: BatchNorm with ReLU, then a bias-free convolution."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1, act="relu") -> None:
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride, pad, groups=groups, bias_attr=False)

    def forward(self, x):
        return self._conv(self._batch_norm(x))


class ConvBNLayer(nn.Layer):
    """The stem's order: a bias-free convolution, then BatchNorm with ReLU."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, pad=0, groups=1, act="relu") -> None:
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride, pad, groups=groups, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, x):
        return self._batch_norm(self._conv(x))


class DenseLayer(nn.Layer):
    """1x1 bottleneck to ``bn_size * growth_rate`` channels, 3x3 to ``growth_rate``, concatenated on."""

    def __init__(self, num_channels, growth_rate, bn_size, dropout) -> None:
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, x):
        new = self.bn_ac_func2(self.bn_ac_func1(x))
        if self.dropout:
            new = self.dropout_func(new)
        return concat([x, new], axis=1)


class DenseBlock(nn.Layer):
    def __init__(self, num_channels, num_layers, bn_size, growth_rate, dropout, name=None) -> None:
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = [
            self.add_sublayer(
                f"{name}_{i + 1}", DenseLayer(num_channels + i * growth_rate, growth_rate, bn_size, dropout)
            )
            for i in range(num_layers)
        ]

    def forward(self, x):
        for layer in self.dense_layer_func:
            x = layer(x)
        return x


class TransitionLayer(nn.Layer):
    def __init__(self, num_channels, num_output_features) -> None:
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, x):
        return self.pool2d_avg(self.conv_ac_func(x))


class DenseNet(nn.Layer):
    def __init__(
        self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0, num_classes: int = 1000, with_pool: bool = True
    ) -> None:
        super().__init__()
        if layers not in SPECS:
            raise ConfigError(f"DenseNet: layers must be one of {sorted(SPECS)}, got {layers!r}")
        self.num_classes, self.with_pool = num_classes, with_pool
        features, growth_rate, self.block_config = SPECS[layers]
        self.conv1_func = ConvBNLayer(3, features, 7, stride=2, pad=3)
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.dense_block_func_list, self.transition_func_list = [], []
        last = len(self.block_config) - 1
        for i, num_layers in enumerate(self.block_config):
            block = DenseBlock(features, num_layers, bn_size, growth_rate, dropout, name=f"conv{i + 2}")
            self.dense_block_func_list.append(self.add_sublayer(f"db_conv_{i + 2}", block))
            features += num_layers * growth_rate
            if i != last:
                transition = TransitionLayer(features, features // 2)
                self.transition_func_list.append(self.add_sublayer(f"tr_conv{i + 2}_blk", transition))
                features //= 2
        self.batch_norm = nn.BatchNorm(features, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            bound = 1.0 / math.sqrt(features)
            self.out = nn.Linear(features, num_classes, weight_attr=nn.initializer.Uniform(-bound, bound))

    def forward(self, x):
        x = self.pool2d_max(self.conv1_func(x))
        for i, block in enumerate(self.dense_block_func_list):
            x = block(x)
            if i < len(self.transition_func_list):
                x = self.transition_func_list[i](x)
        x = self.batch_norm(x)
        return pool_and_classify(self, x, "pool2d_avg", "out")


densenet121 = factory("densenet121", DenseNet, layers=121)
densenet161 = factory("densenet161", DenseNet, layers=161)
densenet169 = factory("densenet169", DenseNet, layers=169)
densenet201 = factory("densenet201", DenseNet, layers=201)
densenet264 = factory("densenet264", DenseNet, layers=264)
