"""``paddle.sparse.nn`` activation layers: the functional forms as Layers."""

from __future__ import annotations

from ...nn.layer.base import Layer
from . import functional as F


class ReLU(Layer):
    def __init__(self, name=None) -> None:
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class ReLU6(Layer):
    def __init__(self, name=None) -> None:
        super().__init__()

    def forward(self, x):
        return F.relu6(x)


class LeakyReLU(Layer):
    def __init__(self, negative_slope=0.01, name=None) -> None:
        super().__init__()
        self._negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self._negative_slope)


class Softmax(Layer):
    def __init__(self, axis=-1, name=None) -> None:
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)
