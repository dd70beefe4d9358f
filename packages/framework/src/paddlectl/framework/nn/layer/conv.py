"""Conv1D, Conv2D and Conv2DTranspose with Paddle's parameter shapes and initialisation.

A convolution's weight starts Normal(0, sqrt(2 / (in_channels * prod(kernel_size)))) as in
Paddle's ``_ConvNd`` (full in_channels, not per group); a transposed convolution's weight keeps
the framework default (Xavier); biases start at zero.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import conv as C
from ...ops._window import as_tuple
from ...ops.shape import pad
from .. import initializer as init
from .base import Layer

__all__ = ["Conv1D", "Conv2D", "Conv2DTranspose"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Layer):
    _dims = 2
    _transposed = False

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        padding_mode="zeros",
        output_padding=0,
        dilation=1,
        groups=1,
        weight_attr=None,
        bias_attr=None,
        data_format="NCHW",
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if weight_attr is False:
            raise ValueError(f"{name}: weight_attr cannot be False; a convolution needs its weight")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        if padding_mode != "zeros" and not isinstance(padding, int):
            raise TypeError(f"{name}: padding_mode {padding_mode!r} needs an int padding, got {padding!r}")
        if in_channels <= 0 or out_channels <= 0 or groups <= 0:
            raise ValueError(f"{name}: in_channels, out_channels and groups must be positive")
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"{name}: in_channels {in_channels} and out_channels {out_channels} must be divisible by {groups=}"
            )
        self._in_channels, self._out_channels, self._groups = in_channels, out_channels, groups
        self._kernel_size = list(as_tuple(name, "kernel_size", kernel_size, self._dims))
        self._stride, self._dilation = stride, dilation
        self._padding, self._padding_mode, self.output_padding = padding, padding_mode, output_padding
        self._data_format = data_format
        if self._transposed:
            shape = [in_channels, out_channels // groups, *self._kernel_size]
            default = None
        else:
            shape = [out_channels, in_channels // groups, *self._kernel_size]
            std = math.sqrt(2.0 / (in_channels * int(np.prod(self._kernel_size))))
            default = init.Normal(0.0, std)
        self.weight = self.create_parameter(shape, attr=weight_attr, default_initializer=default)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def _padded(self, x):
        """Non-zero padding modes pad first (F.pad) and convolve unpadded, as Paddle does."""
        if self._padding_mode == "zeros":
            return x, self._padding
        widths = [self._padding] * (2 * self._dims)
        return pad(x, widths, mode=self._padding_mode, data_format=self._data_format), 0

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != 1:
            text += f", stride={self._stride}"
        if self._padding != 0:
            text += f", padding={self._padding}"
        if self._padding_mode != "zeros":
            text += f", padding_mode={self._padding_mode}"
        if self._dilation != 1:
            text += f", dilation={self._dilation}"
        if self._groups != 1:
            text += f", groups={self._groups}"
        return text + f", data_format={self._data_format}"


class _Conv(_ConvNd):
    """A forward convolution; subclasses fix the rank, the default layout and the functional op."""

    _default_format = "NCHW"
    _conv = staticmethod(C.conv2d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        padding_mode="zeros",
        weight_attr=None,
        bias_attr=None,
        data_format=None,
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, padding_mode, 0, dilation, groups,
            weight_attr, bias_attr, data_format or self._default_format,
        )  # fmt: skip

    def forward(self, x):
        x, padding = self._padded(x)
        return self._conv(
            x, self.weight, self.bias, self._stride, padding, self._dilation, self._groups, self._data_format
        )


class Conv2D(_Conv):
    """2-D convolution over NCHW (or NHWC) images."""


class Conv1D(_Conv):
    """1-D convolution over NCL (or NLC) sequences."""

    _dims = 1
    _default_format = "NCL"
    _conv = staticmethod(C.conv1d)


class Conv2DTranspose(_ConvNd):
    _transposed = True

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        dilation=1,
        weight_attr=None,
        bias_attr=None,
        data_format="NCHW",
    ) -> None:
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, "zeros", output_padding, dilation, groups,
            weight_attr, bias_attr, data_format,
        )  # fmt: skip

    def forward(self, x, output_size=None):
        return C.conv2d_transpose(
            x,
            self.weight,
            self.bias,
            self._stride,
            self._padding,
            self.output_padding,
            self._groups,
            self._dilation,
            output_size,
            self._data_format,
        )
