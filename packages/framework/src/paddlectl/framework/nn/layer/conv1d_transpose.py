"""``paddle.nn.Conv1DTranspose``: ``Conv2DTranspose``'s parameters with a 1-D kernel."""

from __future__ import annotations

from ...ops.conv1d_transpose import conv1d_transpose
from .conv import Conv2DTranspose

__all__ = ["Conv1DTranspose"]


class Conv1DTranspose(Conv2DTranspose):
    """Transposed 1-D convolution over NCL (or NLC) sequences; weight [in, out / groups, k]."""

    _dims = 1

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, dilation=1,
        weight_attr=None, bias_attr=None, data_format="NCL",
    ):  # fmt: skip
        super().__init__(
            in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, dilation,
            weight_attr, bias_attr, data_format,
        )  # fmt: skip

    def forward(self, x, output_size=None):
        return conv1d_transpose(
            x, self.weight, self.bias, self._stride, self._padding, self.output_padding, self._groups,
            self._dilation, output_size, self._data_format,
        )  # fmt: skip
