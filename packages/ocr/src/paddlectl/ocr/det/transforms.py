"""PaddleOCR's detection image operators, under its names, over its sample dict (``image``, ``shape``).

The image operators; ``DecodeImage`` and ``KeepKeys`` are ``task_base``'s, ``DetLabelEncode``
is in ``labels``, ``EastRandomCropData`` in ``random_crop``, the label maps in ``label_maps``.
Evaluation and serving use ``DetResizeForTest``, then ``Pad`` to one size so images batch.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError, DataError


class NormalizeImage:
    """``(image * scale - mean) / std`` per channel, float32."""

    def __init__(self, scale=1.0 / 255.0, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225), order="hwc") -> None:
        scale = _number(scale, "NormalizeImage.scale")
        if order not in ("hwc", "chw"):
            raise ConfigError(f"NormalizeImage.order is {order!r}; use hwc or chw")
        if len(mean) != 3 or len(std) != 3 or min(abs(float(s)) for s in std) == 0:
            raise ConfigError("NormalizeImage.mean and std need three values each, std nonzero")
        shape = (3, 1, 1) if order == "chw" else (1, 1, 3)
        self.scale = np.float32(scale)
        self.mean = np.array(mean, np.float32).reshape(shape)
        self.std = np.array(std, np.float32).reshape(shape)

    def __call__(self, data: dict) -> dict:
        data["image"] = (data["image"].astype(np.float32) * self.scale - self.mean) / self.std
        return data


def _number(value, where: str) -> float:
    """A number, or a fraction as PaddleOCR configs write the scale (``"1./255."``)."""
    try:
        if isinstance(value, str) and value.count("/") == 1:
            top, bottom = value.split("/")
            return float(top) / float(bottom)
        return float(value)
    except (TypeError, ValueError, ZeroDivisionError):
        raise ConfigError(f"{where} is {value!r}; give a number like 0.00392 or 1./255.") from None


class ToCHWImage:
    def __call__(self, data: dict) -> dict:
        data["image"] = np.ascontiguousarray(data["image"].transpose(2, 0, 1))
        return data


class DetResizeForTest:
    """Resize for inference; ``shape`` records [src_h, src_w, ratio_h, ratio_w] for mapping boxes back.

    As PaddleOCR: ``image_shape: [H, W]`` resizes to that size (``Pad`` then brings it to multiples
    of 32); ``limit_side_len`` with ``limit_type`` ``max`` (longest side at most) or ``min``
    (shortest side at least) scales by the side limit and rounds to multiples of 32; ``resize_long:
    L`` scales the longest side to L and rounds up to multiples of 128; the default is
    ``limit_side_len: 736, limit_type: min``.
    """

    def __init__(self, limit_side_len: int | None = None, limit_type: str = "min", image_shape=None,
                 resize_long: int | None = None) -> None:  # fmt: skip
        if image_shape is not None:
            if not (isinstance(image_shape, list | tuple) and len(image_shape) == 2 and min(image_shape) >= 32):
                raise ConfigError(f"DetResizeForTest.image_shape is {image_shape!r}; give [height, width], each >= 32")
            limit_type = "shape"
        elif resize_long is not None:
            limit_side_len, limit_type = resize_long, "resize_long"
        elif limit_side_len is None:
            limit_side_len = 736
        if limit_type not in ("max", "min", "resize_long", "shape"):
            raise ConfigError(f"DetResizeForTest.limit_type is {limit_type!r}; use max, min or resize_long")
        if image_shape is None and not (isinstance(limit_side_len, int) and limit_side_len >= 32):
            raise ConfigError(f"DetResizeForTest.limit_side_len is {limit_side_len!r}; give an integer >= 32")
        self.limit_side_len, self.limit_type = limit_side_len, limit_type
        self.image_shape = list(image_shape) if image_shape is not None else None

    def max_size(self) -> tuple[int, int] | None:
        """The largest (height, width) this resize can produce, or None when unbounded (``min``)."""
        if self.limit_type == "shape":
            return tuple(self.image_shape)
        if self.limit_type == "min":
            return None
        if self.limit_type == "resize_long":
            return (-(-self.limit_side_len // 128) * 128,) * 2
        side = max(_round32(self.limit_side_len), 32)
        return side, side

    def target(self, h: int, w: int) -> tuple[int, int]:
        if self.limit_type == "shape":
            return self.image_shape[0], self.image_shape[1]
        longest, shortest = max(h, w), min(h, w)
        if self.limit_type == "resize_long":  # scaled to the limit, then up to multiples of 128
            ratio = self.limit_side_len / longest
            return tuple(max(-(-int(s * ratio) // 128) * 128, 128) for s in (h, w))
        if self.limit_type == "max" and longest > self.limit_side_len:
            ratio = self.limit_side_len / longest
        elif self.limit_type == "min" and shortest < self.limit_side_len:
            ratio = self.limit_side_len / shortest
        else:
            ratio = 1.0
        return max(_round32(int(h * ratio)), 32), max(_round32(int(w * ratio)), 32)

    def __call__(self, data: dict) -> dict:
        image = data["image"]
        h, w = image.shape[:2]
        rh, rw = self.target(h, w)
        data["image"] = cv2.resize(image, (rw, rh))
        data["shape"] = np.array([h, w, rh / h, rw / w], np.float32)
        return data


def _round32(value: float) -> int:
    return int(round(value / 32) * 32)


class Pad:
    """Zero-pad the image at the bottom and right to ``size: [H, W]`` (or to multiples of ``size_div``)."""

    def __init__(self, size=None, size_div: int = 32) -> None:
        if size is not None and not (isinstance(size, list | tuple) and len(size) == 2 and min(size) > 0):
            raise ConfigError(f"Pad.size is {size!r}; give [height, width]")
        self.size, self.size_div = (list(size) if size is not None else None), int(size_div)

    def __call__(self, data: dict) -> dict:
        image = data["image"]
        h, w = image.shape[:2]
        th, tw = self.size or (
            math.ceil(h / self.size_div) * self.size_div,
            math.ceil(w / self.size_div) * self.size_div,
        )
        if h > th or w > tw:
            raise DataError(f"an image resized to {h}x{w} does not fit Pad.size {th}x{tw}; raise Pad.size")
        out = np.zeros((th, tw, *image.shape[2:]), image.dtype)
        out[:h, :w] = image
        data["image"] = out
        return data
