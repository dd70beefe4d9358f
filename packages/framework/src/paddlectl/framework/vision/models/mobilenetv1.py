"""MobileNetV1 in Paddle's structure and parameter names: depthwise-separable blocks named
``conv2_1`` ... ``conv6``, every channel count scaled by ``scale`` and truncated to an int."""

from __future__ import annotations

from ... import nn
from ._layers import ConvNormActivation, pool_and_classify
from ._weights import refuse_download

# (name, in, depthwise, pointwise, stride) before scaling; ``in`` is scaled, the others inside the block.
BLOCKS = [
    ("conv2_1", 32, 32, 64, 1),
    ("conv2_2", 64, 64, 128, 2),
    ("conv3_1", 128, 128, 128, 1),
    ("conv3_2", 128, 128, 256, 2),
    ("conv4_1", 256, 256, 256, 1),
    ("conv4_2", 256, 256, 512, 2),
    *[(f"conv5_{i}", 512, 512, 512, 1) for i in range(1, 6)],
    ("conv5_6", 512, 512, 1024, 2),
    ("conv6", 1024, 1024, 1024, 1),
]


class DepthwiseSeparable(nn.Layer):
    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale) -> None:
        super().__init__()
        depthwise = int(out_channels1 * scale)
        self._depthwise_conv = ConvNormActivation(
            in_channels, depthwise, kernel_size=3, stride=stride, padding=1, groups=int(num_groups * scale)
        )
        self._pointwise_conv = ConvNormActivation(depthwise, int(out_channels2 * scale), kernel_size=1, padding=0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


class MobileNetV1(nn.Layer):
    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.scale, self.num_classes, self.with_pool = scale, num_classes, with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        self.dwsl = [
            self.add_sublayer(name, DepthwiseSeparable(int(cin * scale), dw, pw, dw, stride, scale))
            for name, cin, dw, pw, stride in BLOCKS
        ]
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        return pool_and_classify(self, x, "pool2d_avg", "fc")


def mobilenet_v1(pretrained: bool = False, scale: float = 1.0, **kwargs) -> MobileNetV1:
    refuse_download(f"mobilenet_v1(scale={scale})", pretrained)
    return MobileNetV1(scale=scale, **kwargs)
