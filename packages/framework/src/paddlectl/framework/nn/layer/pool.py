"""Pooling layers: thin holders of the arguments of ``nn.functional``'s pooling functions."""

from __future__ import annotations

from ...ops import pool as F
from .base import Layer

__all__ = [
    "MaxPool1D", "MaxPool2D", "AvgPool1D", "AvgPool2D",
    "AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveMaxPool1D", "AdaptiveMaxPool2D",
]  # fmt: skip


class _Pool(Layer):
    """Stores its constructor's keyword arguments and calls ``_fn(x, **kwargs)``."""

    _fn = None

    def __init__(self, **kwargs) -> None:
        super().__init__()
        kwargs.pop("name", None)
        self._kwargs = kwargs

    def forward(self, x):
        return type(self)._fn(x, **self._kwargs)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._kwargs.items())


class MaxPool1D(_Pool):
    _fn = F.max_pool1d

    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
        super().__init__(
            kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask, ceil_mode=ceil_mode
        )


class MaxPool2D(_Pool):
    _fn = F.max_pool2d

    def __init__(
        self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW", name=None
    ):
        super().__init__(
            kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask, ceil_mode=ceil_mode,
            data_format=data_format,
        )  # fmt: skip


class AvgPool1D(_Pool):
    _fn = F.avg_pool1d

    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
        super().__init__(
            kernel_size=kernel_size, stride=stride, padding=padding, exclusive=exclusive, ceil_mode=ceil_mode
        )


class AvgPool2D(_Pool):
    _fn = F.avg_pool2d

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
        data_format="NCHW", name=None,
    ):  # fmt: skip
        super().__init__(
            kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode, exclusive=exclusive,
            divisor_override=divisor_override, data_format=data_format,
        )  # fmt: skip


class AdaptiveAvgPool1D(_Pool):
    _fn = F.adaptive_avg_pool1d

    def __init__(self, output_size, name=None):
        super().__init__(output_size=output_size)


class AdaptiveAvgPool2D(_Pool):
    _fn = F.adaptive_avg_pool2d

    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__(output_size=output_size, data_format=data_format)


class AdaptiveMaxPool1D(_Pool):
    _fn = F.adaptive_max_pool1d

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask)


class AdaptiveMaxPool2D(_Pool):
    _fn = F.adaptive_max_pool2d

    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(output_size=output_size, return_mask=return_mask)
