"""ShuffleNetV2 (widths x0.25 to x2.0, ReLU or Swish) in Paddle's structure and parameter names."""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ...ops.shape import concat, reshape, transpose
from ._layers import ConvNormActivation, pool_and_classify
from ._weights import factory

# scale -> output channels of the stem, the three stages and the last 1x1 convolution
WIDTHS = {
    0.25: (24, 24, 48, 96, 512),
    0.33: (24, 32, 64, 128, 512),
    0.5: (24, 48, 96, 192, 1024),
    1.0: (24, 116, 232, 464, 1024),
    1.5: (24, 176, 352, 704, 1024),
    2.0: (24, 224, 488, 976, 2048),
}
ACTIVATIONS = {"relu": nn.ReLU, "swish": nn.Swish, None: None}
STAGE_REPEATS = (4, 8, 4)


def channel_shuffle(x, groups: int):
    """Interleave the channels of ``groups`` equal groups, so the next block mixes both halves.

    Paddle reshapes [N, C, H, W] to [N, g, C/g, H, W], which needs H and W as numbers; here the
    channels go last first, so each reshape copies N, H, W (``0``) and a traced program, its ONNX
    export included, keeps them symbolic."""
    channels = x.shape[1]
    x = reshape(transpose(x, [0, 2, 3, 1]), [0, 0, 0, groups, channels // groups])
    x = reshape(transpose(x, [0, 1, 2, 4, 3]), [0, 0, 0, channels])
    return transpose(x, [0, 3, 1, 2])


def _unit(in_channels, out_channels, stride=1, depthwise=False, act=None) -> ConvNormActivation:
    """A 3x3 depthwise (no activation) or 1x1 pointwise ConvNormActivation, Paddle's building unit."""
    if depthwise:
        return ConvNormActivation(in_channels, out_channels, 3, stride, 1, groups=in_channels, activation_layer=None)
    return ConvNormActivation(in_channels, out_channels, 1, 1, 0, activation_layer=act)


class InvertedResidual(nn.Layer):
    """Stride-1 unit: half the channels pass through, the other half go pointwise-depthwise-pointwise."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU) -> None:
        super().__init__()
        half = out_channels // 2
        self._conv_pw = _unit(in_channels // 2, half, act=activation_layer)
        self._conv_dw = _unit(half, half, stride, depthwise=True)
        self._conv_linear = _unit(half, half, act=activation_layer)

    def forward(self, x):
        half = x.shape[1] // 2  # slices rather than split: they export to ONNX
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x[:, half:])))
        return channel_shuffle(concat([x[:, :half], x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """Down-sampling unit: both branches see the whole input and halve the resolution."""

    def __init__(self, in_channels, out_channels, stride, activation_layer=nn.ReLU) -> None:
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = _unit(in_channels, in_channels, stride, depthwise=True)
        self._conv_linear_1 = _unit(in_channels, half, act=activation_layer)
        self._conv_pw_2 = _unit(in_channels, half, act=activation_layer)
        self._conv_dw_2 = _unit(half, half, stride, depthwise=True)
        self._conv_linear_2 = _unit(half, half, act=activation_layer)

    def forward(self, x):
        x1 = self._conv_linear_1(self._conv_dw_1(x))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(x)))
        return channel_shuffle(concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    def __init__(self, scale: float = 1.0, act: str = "relu", num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if scale not in WIDTHS:
            raise ConfigError(f"ShuffleNetV2: scale must be one of {sorted(WIDTHS)}, got {scale!r}")
        if act not in ACTIVATIONS:
            raise ConfigError(f"ShuffleNetV2: act must be 'relu', 'swish' or None, got {act!r}")
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        widths, activation = WIDTHS[scale], ACTIVATIONS[act]
        self._conv1 = ConvNormActivation(3, widths[0], 3, 2, 1, activation_layer=activation)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._block_list = []
        for stage, repeats in enumerate(STAGE_REPEATS):
            for i in range(repeats):
                if i == 0:
                    block = InvertedResidualDS(widths[stage], widths[stage + 1], 2, activation)
                else:
                    block = InvertedResidual(widths[stage + 1], widths[stage + 1], 1, activation)
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = _unit(widths[-2], widths[-1], act=activation)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = widths[-1]
            self._fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self._max_pool(self._conv1(x))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        return pool_and_classify(self, x, "_pool2d_avg", "_fc")


shufflenet_v2_x0_25 = factory("shufflenet_v2_x0_25", ShuffleNetV2, scale=0.25)
shufflenet_v2_x0_33 = factory("shufflenet_v2_x0_33", ShuffleNetV2, scale=0.33)
shufflenet_v2_x0_5 = factory("shufflenet_v2_x0_5", ShuffleNetV2, scale=0.5)
shufflenet_v2_x1_0 = factory("shufflenet_v2_x1_0", ShuffleNetV2, scale=1.0)
shufflenet_v2_x1_5 = factory("shufflenet_v2_x1_5", ShuffleNetV2, scale=1.5)
shufflenet_v2_x2_0 = factory("shufflenet_v2_x2_0", ShuffleNetV2, scale=2.0)
shufflenet_v2_swish = factory("shufflenet_v2_swish", ShuffleNetV2, scale=1.0, act="swish")
