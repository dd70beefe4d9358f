"""Resizing layers over ``nn.functional.interpolate``."""

from __future__ import annotations

from ...ops.interpolate import interpolate
from .base import Layer

__all__ = ["Upsample", "UpsamplingNearest2D", "UpsamplingBilinear2D"]


class Upsample(Layer):
    def __init__(
        self, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0, data_format=None,
        recompute_scale_factor=None, name=None,
    ):  # fmt: skip
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode.lower()
        self.align_corners, self.align_mode, self.data_format = align_corners, align_mode, data_format
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x):
        return interpolate(
            x, self.size, self.scale_factor, self.mode, self.align_corners, self.align_mode, self.data_format,
            self.recompute_scale_factor,
        )  # fmt: skip

    def extra_repr(self) -> str:
        which = f"scale_factor={self.scale_factor}" if self.size is None else f"size={self.size}"
        return (
            f"{which}, mode={self.mode}, align_corners={self.align_corners}, align_mode={self.align_mode}, "
            f"data_format={self.data_format}"
        )


class UpsamplingNearest2D(Upsample):
    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "nearest", False, 0, data_format)


class UpsamplingBilinear2D(Upsample):
    """Bilinear with align_corners=True, as in Paddle."""

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None):
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format)
