"""``paddle.sparse.nn`` convolution layers: Paddle's weight [*kernel, C_in, C_out], initialised
Normal(0, sqrt(2 / (C_in * prod(kernel)))), and a zero bias."""

from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from ...nn import initializer as init
from ...nn.layer.base import Layer
from ...ops._window import as_tuple
from . import functional as F


class _SparseConv(Layer):
    _dims = 3
    _subm = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", weight_attr=None, bias_attr=None, data_format=None):  # fmt: skip
        super().__init__()
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ShapeError(f"{name}: sparse convolutions pad with zeros only, got padding_mode={padding_mode!r}")
        kernel = list(as_tuple(name, "kernel_size", kernel_size, self._dims))
        self._stride, self._padding, self._dilation, self._groups = stride, padding, dilation, groups
        self._data_format = data_format or ("NHWC" if self._dims == 2 else "NDHWC")
        std = math.sqrt(2.0 / (in_channels * int(np.prod(kernel))))
        self.weight = self.create_parameter(
            [*kernel, in_channels // groups, out_channels], attr=weight_attr, default_initializer=init.Normal(0.0, std)
        )
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x):
        conv = {(2, False): F.conv2d, (3, False): F.conv3d, (2, True): F.subm_conv2d, (3, True): F.subm_conv3d}
        return conv[self._dims, self._subm](x, self.weight, self.bias, self._stride, self._padding, self._dilation,
                                            self._groups, self._data_format)  # fmt: skip


class Conv2D(_SparseConv):
    _dims = 2


class Conv3D(_SparseConv):
    _dims = 3


class _SubmConv(_SparseConv):
    """Paddle's submanifold layers take ``key`` (a rulebook cache name) before the attrs, and a
    ``backend`` ('igemm' is a faster CUDA kernel of the same convolution)."""

    _subm = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 padding_mode="zeros", key=None, weight_attr=None, bias_attr=None, data_format=None,
                 backend=None):  # fmt: skip
        if backend not in (None, "igemm"):
            raise ShapeError(f"{type(self).__name__}: backend must be None or 'igemm', got {backend!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, padding_mode,
                         weight_attr, bias_attr, data_format)  # fmt: skip


class SubmConv2D(_SubmConv):
    _dims = 2


class SubmConv3D(_SubmConv):
    _dims = 3
