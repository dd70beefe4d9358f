"""GoogLeNet (Inception v1) as Paddle defines it: bias-free convolutions without batch norm, and two
auxiliary heads, so ``forward`` returns ``(out, aux1, aux2)`` like Paddle's.

With the heads (``num_classes > 0``, which needs ``with_pool``) the input must be about 224x224: each
auxiliary head flattens a 128x3x3 map (an ``inception_4a``/``4d`` map of 11 to 13 pixels a side).
"""

from __future__ import annotations

from ... import nn
from ...errors import ShapeError
from ...nn import functional as F
from ...ops.shape import concat, flatten
from ._weights import factory


def xavier(channels: int, filter_size: int) -> nn.ParamAttr:
    bound = (3.0 / (filter_size**2 * channels)) ** 0.5
    return nn.ParamAttr(initializer=nn.initializer.Uniform(-bound, bound))


class ConvLayer(nn.Layer):
    """A bias-free "same" convolution, held as ``_conv`` (Paddle's parameter names)."""

    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1) -> None:
        super().__init__()
        self._conv = nn.Conv2D(
            num_channels, num_filters, filter_size, stride=stride, padding=(filter_size - 1) // 2, groups=groups,
            bias_attr=False,
        )  # fmt: skip

    def forward(self, x):
        return self._conv(x)


class Inception(nn.Layer):
    """Four parallel branches (1x1; 1x1-3x3; 1x1-5x5; 3x3 max pool-1x1) concatenated, then ReLU."""

    def __init__(self, input_channels, output_channels, filter1, filter3R, filter3, filter5R, filter5, proj) -> None:  # noqa: N803
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, x):
        branches = [
            self._conv1(x),
            self._conv3(self._conv3r(x)),
            self._conv5(self._conv5r(x)),
            self._convprj(self._pool(x)),
        ]
        return F.relu(concat(branches, axis=1))


# name -> (in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection)
INCEPTIONS = {
    "_ince3a": (192, 64, 96, 128, 16, 32, 32),
    "_ince3b": (256, 128, 128, 192, 32, 96, 64),
    "_ince4a": (480, 192, 96, 208, 16, 48, 64),
    "_ince4b": (512, 160, 112, 224, 24, 64, 64),
    "_ince4c": (512, 128, 128, 256, 24, 64, 64),
    "_ince4d": (512, 112, 144, 288, 32, 64, 64),
    "_ince4e": (528, 256, 160, 320, 32, 128, 128),
    "_ince5a": (832, 256, 160, 320, 32, 128, 128),
    "_ince5b": (832, 384, 192, 384, 48, 128, 128),
}


class GoogLeNet(nn.Layer):
    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes, self.with_pool = num_classes, with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        for name, (cin, *widths) in INCEPTIONS.items():
            setattr(self, name, Inception(cin, cin, *widths))
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))

    def forward(self, x):
        x = self._pool(self._conv(x))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        aux1 = self._ince4a(x)
        aux2 = self._ince4d(self._ince4c(self._ince4b(aux1)))
        out = self._ince5b(self._ince5a(self._pool(self._ince4e(aux2))))
        if self.with_pool:
            out, aux1, aux2 = self._pool_5(out), self._pool_o1(aux1), self._pool_o2(aux2)
        if self.num_classes > 0:
            if not self.with_pool or list(aux1.shape[2:]) != [3, 3]:
                raise ShapeError(
                    f"GoogLeNet: the classifier heads need with_pool=True and 3x3 pooled maps (inputs of about "
                    f"224x224), got {list(aux1.shape[2:])}; resize the input or build GoogLeNet(num_classes=0)"
                )
            out = self._fc_out(flatten(self._drop(out), 1))  # [N, 1024, 1, 1]: Paddle squeezes
            aux1 = self._out1(self._drop_o1(F.relu(self._fc_o1(flatten(self._conv_o1(aux1), 1)))))
            # Paddle's second head has no ReLU between its fully connected layers; kept for its weights
            aux2 = self._out2(self._drop_o2(self._fc_o2(flatten(self._conv_o2(aux2), 1))))
        return out, aux1, aux2


googlenet = factory("googlenet", GoogLeNet)
