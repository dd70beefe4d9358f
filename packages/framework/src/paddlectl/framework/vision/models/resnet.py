"""ResNet with basic blocks (18 and 34 layers), in Paddle's structure and parameter names."""

from ... import nn
from ...ops.shape import flatten
from ._weights import refuse_download


class BasicBlock(nn.Layer):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample=None) -> None:
        super().__init__()
        self.conv1 = nn.Conv2D(inplanes, planes, 3, padding=1, stride=stride, bias_attr=False)
        self.bn1 = nn.BatchNorm2D(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2D(planes, planes, 3, padding=1, bias_attr=False)
        self.bn2 = nn.BatchNorm2D(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + shortcut)


class ResNet(nn.Layer):
    """``depth`` 18 or 34; ``with_pool`` and ``num_classes <= 0`` strip the head, as in Paddle."""

    STAGES = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3)}

    def __init__(self, block=BasicBlock, depth: int = 18, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if depth not in self.STAGES:
            raise ValueError(f"ResNet: depth must be one of {sorted(self.STAGES)}, got {depth}")
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
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes) for _ in range(1, count)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def resnet18(pretrained: bool = False, **kwargs) -> ResNet:
    refuse_download("resnet18", pretrained)
    return ResNet(BasicBlock, 18, **kwargs)


def resnet34(pretrained: bool = False, **kwargs) -> ResNet:
    refuse_download("resnet34", pretrained)
    return ResNet(BasicBlock, 34, **kwargs)
