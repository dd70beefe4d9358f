"""AlexNet as Paddle defines it: five convolutions and three fully connected layers, every weight and
bias starting Uniform(+-1/sqrt(fan_in)); the head expects a 256x6x6 feature map (224x224 inputs)."""

from __future__ import annotations

import math

from ... import nn
from ...errors import ShapeError
from ...nn import functional as F
from ...ops.shape import flatten
from ._weights import factory


def _uniform(fan_in: int) -> nn.ParamAttr:
    bound = 1.0 / math.sqrt(fan_in)
    return nn.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound))


def _conv(in_channels: int, out_channels: int, kernel: int, stride: int, padding: int) -> nn.Conv2D:
    attr = _uniform(in_channels * kernel * kernel)
    return nn.Conv2D(
        in_channels, out_channels, kernel, stride=stride, padding=padding, weight_attr=attr, bias_attr=attr
    )


class ConvPoolLayer(nn.Layer):
    """Convolution, optional ReLU, 3x3/2 max pool (sublayers ``_conv`` and ``_pool``, as in Paddle)."""

    def __init__(self, input_channels, output_channels, filter_size, stride, padding, act=None) -> None:
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        self._conv = _conv(input_channels, output_channels, filter_size, stride, padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, x):
        x = self._conv(x)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, act="relu")
        self._conv3 = _conv(192, 384, 3, 1, 1)
        self._conv4 = _conv(384, 256, 3, 1, 1)
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, act="relu")
        if num_classes > 0:
            attr = _uniform(256 * 6 * 6)
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(256 * 6 * 6, 4096, weight_attr=attr, bias_attr=attr)
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, weight_attr=attr, bias_attr=attr)
            self._fc8 = nn.Linear(4096, num_classes, weight_attr=attr, bias_attr=attr)

    def forward(self, inputs):
        x = self._conv2(self._conv1(inputs))
        x = F.relu(self._conv4(F.relu(self._conv3(x))))
        x = self._conv5(x)
        if self.num_classes > 0:
            if list(x.shape[1:]) != [256, 6, 6]:
                raise ShapeError(
                    f"AlexNet: the classifier needs a 256x6x6 feature map (inputs of 223 to 254 pixels a side, "
                    f"224x224 as in Paddle), got {list(x.shape[1:])}; resize the input or build AlexNet(num_classes=0)"
                )
            x = F.relu(self._fc6(self._drop1(flatten(x, 1))))
            x = F.relu(self._fc7(self._drop2(x)))
            x = self._fc8(x)
        return x


alexnet = factory("alexnet", AlexNet)
