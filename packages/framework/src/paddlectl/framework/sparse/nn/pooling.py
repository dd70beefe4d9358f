"""``paddle.sparse.nn.MaxPool3D``."""

from __future__ import annotations

from ...nn.layer.base import Layer
from . import functional as F


class MaxPool3D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False,
                 data_format="NDHWC", name=None):  # fmt: skip
        super().__init__()
        self._args = (kernel_size, stride, padding, ceil_mode, data_format)

    def forward(self, x):
        return F.max_pool3d(x, *self._args)
