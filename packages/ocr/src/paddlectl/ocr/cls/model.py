"""The direction classifier's parts (PaddleOCR's ``cls`` model): MobileNetV3 small strided in both
axes (a global decision needs no column sequence), and ``ClsHead``: global average pool, one
linear layer to ``class_dim`` logits (serving applies the softmax, see ``postprocess``)."""

from __future__ import annotations

from paddlectl.framework import nn

from ..rec.mobilenet_v3 import MobileNetV3


def cls_backbone(
    in_channels: int = 3, model_name: str = "small", scale: float = 0.35, disable_se: bool = False
) -> MobileNetV3:
    return MobileNetV3(in_channels, model_name, scale, disable_se=disable_se, full_stride=True)


class ClsHead(nn.Layer):
    def __init__(self, in_channels: int, class_dim: int = 2) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2D(1)
        self.fc = nn.Linear(in_channels, class_dim)

    def forward(self, x):
        return self.fc(self.pool(x).flatten(1))
