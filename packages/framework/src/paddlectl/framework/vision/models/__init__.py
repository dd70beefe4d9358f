"""``paddle.vision.models``: the reference architectures, with Paddle's layer names so weights interchange."""

from .lenet import LeNet
from .mobilenetv3 import MobileNetV3Small, mobilenet_v3_small
from .resnet import ResNet, resnet18, resnet34

__all__ = ["LeNet", "ResNet", "resnet18", "resnet34", "MobileNetV3Small", "mobilenet_v3_small"]
