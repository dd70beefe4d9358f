"""ResNet, ResNeXt and Wide ResNet in Paddle's structure and parameter names.

``ResNet(block, depth, width, num_classes, with_pool, groups)`` as in Paddle: ``width`` is the
bottleneck's base width per group (64 plain, 4 for ResNeXt's 32x4d/64x4d, 128 for wide_resnet*_2).
"""

from __future__ import annotations

from ... import nn
from ...errors import ConfigError
from ._layers import pool_and_classify
from ._weights import factory


class BasicBlock(nn.Layer):
    """Two 3x3 convolutions; ``groups``/``base_width`` are accepted (Paddle's block signature) and unused."""

    expansion = 1

    def __init__(
        self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1, norm_layer=None
    ) -> None:
        super().__init__()
        if dilation > 1:
            raise ConfigError("BasicBlock: dilation > 1 is not supported (as in Paddle); use BottleneckBlock")
        norm_layer = norm_layer or nn.BatchNorm2D
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + shortcut)


class BottleneckBlock(nn.Layer):
    """1x1 reduce, grouped 3x3 (``groups`` x ``base_width``/64 x ``planes`` channels), 1x1 expand by 4."""

    expansion = 4

    def __init__(
        self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1, norm_layer=None
    ) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2D
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = nn.Conv2D(inplanes, width, 1, bias_attr=False)
        self.bn1 = norm_layer(width)
        self.conv2 = nn.Conv2D(
            width, width, 3, padding=dilation, stride=stride, groups=groups, dilation=dilation, bias_attr=False
        )
        self.bn2 = norm_layer(width)
        self.conv3 = nn.Conv2D(width, planes * self.expansion, 1, bias_attr=False)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + shortcut)


class ResNet(nn.Layer):
    """``depth`` 18/34/50/101/152 (blocks per stage below); ``with_pool=False`` and ``num_classes <= 0``
    strip the head, as in Paddle. ``block`` defaults to BasicBlock (Paddle requires it)."""

    STAGES = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}

    def __init__(
        self, block=BasicBlock, depth: int = 50, width: int = 64, num_classes: int = 1000, with_pool: bool = True,
        groups: int = 1,
    ) -> None:  # fmt: skip
        super().__init__()
        if depth not in self.STAGES:
            raise ConfigError(f"ResNet: depth must be one of {sorted(self.STAGES)}, got {depth!r}")
        if not (isinstance(block, type) and issubclass(block, nn.Layer) and hasattr(block, "expansion")):
            raise ConfigError(f"ResNet: block must be BasicBlock, BottleneckBlock or a like Layer class, got {block!r}")
        self.groups, self.base_width = groups, width
        self.num_classes, self.with_pool = num_classes, with_pool
        self.inplanes = 64
        self.conv1 = nn.Conv2D(3, 64, kernel_size=7, stride=2, padding=3, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks = self.STAGES[depth]
        self.layer1 = self._stage(block, 64, blocks[0], 1)
        self.layer2 = self._stage(block, 128, blocks[1], 2)
        self.layer3 = self._stage(block, 256, blocks[2], 2)
        self.layer4 = self._stage(block, 512, blocks[3], 2)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D((1, 1))
        if num_classes > 0:
            self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _stage(self, block, planes: int, count: int, stride: int) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2D(self.inplanes, planes * block.expansion, 1, stride=stride, bias_attr=False),
                nn.BatchNorm2D(planes * block.expansion),
            )
        shape = {"groups": self.groups, "base_width": self.base_width}
        layers = [block(self.inplanes, planes, stride, downsample, **shape)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, **shape) for _ in range(1, count)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return pool_and_classify(self, x, "avgpool", "fc")


resnet18 = factory("resnet18", ResNet, block=BasicBlock, depth=18)
resnet34 = factory("resnet34", ResNet, block=BasicBlock, depth=34)
resnet50 = factory("resnet50", ResNet, block=BottleneckBlock, depth=50)
resnet101 = factory("resnet101", ResNet, block=BottleneckBlock, depth=101)
resnet152 = factory("resnet152", ResNet, block=BottleneckBlock, depth=152)
resnext50_32x4d = factory("resnext50_32x4d", ResNet, block=BottleneckBlock, depth=50, groups=32, width=4)
resnext50_64x4d = factory("resnext50_64x4d", ResNet, block=BottleneckBlock, depth=50, groups=64, width=4)
resnext101_32x4d = factory("resnext101_32x4d", ResNet, block=BottleneckBlock, depth=101, groups=32, width=4)
resnext101_64x4d = factory("resnext101_64x4d", ResNet, block=BottleneckBlock, depth=101, groups=64, width=4)
resnext152_32x4d = factory("resnext152_32x4d", ResNet, block=BottleneckBlock, depth=152, groups=32, width=4)
resnext152_64x4d = factory("resnext152_64x4d", ResNet, block=BottleneckBlock, depth=152, groups=64, width=4)
wide_resnet50_2 = factory("wide_resnet50_2", ResNet, block=BottleneckBlock, depth=50, width=128)
wide_resnet101_2 = factory("wide_resnet101_2", ResNet, block=BottleneckBlock, depth=101, width=128)
