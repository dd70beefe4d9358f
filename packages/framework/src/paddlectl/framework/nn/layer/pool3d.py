"""3-D, Lp and unpooling layers: holders of the arguments of ``nn.functional``'s functions
(ops/pool3d.py, ops/unpool.py)."""

from __future__ import annotations

from ...ops import pool3d as F
from ...ops import unpool as U
from .base import Layer
from .pool import AdaptiveAvgPool2D, AdaptiveMaxPool2D, AvgPool2D, MaxPool2D, _Pool

__all__ = [
    "MaxPool3D", "AvgPool3D", "AdaptiveAvgPool3D", "AdaptiveMaxPool3D", "LPPool1D", "LPPool2D",
    "MaxUnPool1D", "MaxUnPool2D", "MaxUnPool3D",
]  # fmt: skip


class MaxPool3D(MaxPool2D):
    _fn = F.max_pool3d

    def __init__(
        self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCDHW", name=None
    ):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format)


class AvgPool3D(AvgPool2D):
    _fn = F.avg_pool3d

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
        data_format="NCDHW", name=None,
    ):  # fmt: skip
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format)


class AdaptiveAvgPool3D(AdaptiveAvgPool2D):
    _fn = F.adaptive_avg_pool3d

    def __init__(self, output_size, data_format="NCDHW", name=None):
        super().__init__(output_size, data_format)


class AdaptiveMaxPool3D(AdaptiveMaxPool2D):
    _fn = F.adaptive_max_pool3d


class _LPPool(_Pool):
    """Lp pooling; ``data_format`` None means the layout of the subclass's rank."""

    _layout = None

    def __init__(self, norm_type, kernel_size, stride=None, padding=0, ceil_mode=False, data_format=None, name=None):
        super().__init__(
            norm_type=norm_type, kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
            data_format=data_format or self._layout,
        )  # fmt: skip


class LPPool1D(_LPPool):
    _fn, _layout = F.lp_pool1d, "NCL"


class LPPool2D(_LPPool):
    _fn, _layout = F.lp_pool2d, "NCHW"


class _MaxUnPool(Layer):
    """Holds the unpooling arguments; ``forward(x, indices)`` takes the pool's mask as well."""

    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, data_format=None, output_size=None, name=None):
        super().__init__()
        self._kwargs = dict(kernel_size=kernel_size, stride=stride, padding=padding, output_size=output_size)
        if data_format is not None:
            self._kwargs["data_format"] = data_format

    def forward(self, x, indices):
        return type(self)._fn(x, indices, **self._kwargs)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._kwargs.items())


class MaxUnPool1D(_MaxUnPool):
    _fn = U.max_unpool1d


class MaxUnPool2D(_MaxUnPool):
    _fn = U.max_unpool2d


class MaxUnPool3D(_MaxUnPool):
    _fn = U.max_unpool3d
