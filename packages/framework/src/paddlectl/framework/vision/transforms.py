"""``paddle.vision.transforms``: image preprocessing on HWC arrays or PIL images, Paddle's defaults.

Inputs are ``numpy.ndarray`` (HWC, or HW for grey) or PIL images; resizing uses Pillow, the
library Paddle's default 'pil' backend uses, so results agree with Paddle's.
"""

from __future__ import annotations

import numbers

import numpy as np
from PIL import Image

from ..core.tensor import Tensor
from ..ops.random import generator

_INTERPOLATION = {
    "nearest": Image.NEAREST,
    "bilinear": Image.BILINEAR,
    "bicubic": Image.BICUBIC,
    "lanczos": Image.LANCZOS,
}


def _as_array(img) -> np.ndarray:
    if isinstance(img, Image.Image):
        return np.asarray(img)
    if isinstance(img, np.ndarray):
        return img
    raise TypeError(f"expected a numpy.ndarray (HWC) or a PIL image, got {type(img).__name__}")


def _like(result: np.ndarray, original):
    return Image.fromarray(result) if isinstance(original, Image.Image) else result


def _pair(size) -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) != 2:
        raise ValueError(f"size must be an int or (height, width), got {size!r}")
    return int(size[0]), int(size[1])


class BaseTransform:
    def __call__(self, img):
        return self._apply_image(img)


class Compose:
    def __init__(self, transforms) -> None:
        self.transforms = list(transforms)

    def __call__(self, data):
        for transform in self.transforms:
            data = transform(data)
        return data


def resize(img, size, interpolation: str = "bilinear"):
    """An int ``size`` scales the shorter side to it (keeping aspect); a pair gives (height, width)."""
    if interpolation not in _INTERPOLATION:
        raise ValueError(f"interpolation must be one of {sorted(_INTERPOLATION)}, got {interpolation!r}")
    array = _as_array(img)
    h, w = array.shape[:2]
    if isinstance(size, numbers.Number):
        short = int(size)
        th, tw = (short, int(short * w / h)) if h <= w else (int(short * h / w), short)
    else:
        th, tw = _pair(size)
    pil = (
        img
        if isinstance(img, Image.Image)
        else Image.fromarray(array.squeeze(-1) if array.ndim == 3 and array.shape[2] == 1 else array)
    )
    out = pil.resize((tw, th), _INTERPOLATION[interpolation])
    if isinstance(img, Image.Image):
        return out
    result = np.asarray(out)
    return result[..., None] if array.ndim == 3 and result.ndim == 2 else result


class Resize(BaseTransform):
    def __init__(self, size, interpolation: str = "bilinear", keys=None) -> None:
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img):
        return resize(img, self.size, self.interpolation)


def to_tensor(pic, data_format: str = "CHW") -> Tensor:
    """HWC uint8 in [0, 255] -> float32 in [0, 1], CHW unless ``data_format='HWC'``."""
    array = _as_array(pic)
    if array.ndim == 2:
        array = array[:, :, None]
    out = array.astype("float32")
    if array.dtype == np.uint8:
        out /= 255.0
    if data_format == "CHW":
        out = out.transpose(2, 0, 1)
    elif data_format != "HWC":
        raise ValueError(f"data_format must be 'CHW' or 'HWC', got {data_format!r}")
    return Tensor._wrap(np.ascontiguousarray(out))


class ToTensor(BaseTransform):
    def __init__(self, data_format: str = "CHW", keys=None) -> None:
        self.data_format = data_format

    def _apply_image(self, img):
        return to_tensor(img, self.data_format)


def normalize(img, mean, std, data_format: str = "CHW", to_rgb: bool = False):
    array = img.numpy() if isinstance(img, Tensor) else np.asarray(img, dtype="float32")
    channel_axis = 0 if data_format == "CHW" else -1
    if to_rgb:
        array = np.flip(array, axis=channel_axis)
    shape = [1] * array.ndim
    shape[channel_axis] = -1
    mean = np.asarray(mean, dtype="float32").reshape(shape)
    std = np.asarray(std, dtype="float32").reshape(shape)
    out = ((array - mean) / std).astype("float32")
    return Tensor._wrap(out) if isinstance(img, Tensor) else out


class Normalize(BaseTransform):
    def __init__(self, mean=0.0, std=1.0, data_format: str = "CHW", to_rgb: bool = False, keys=None) -> None:
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        self.data_format, self.to_rgb = data_format, to_rgb

    def _apply_image(self, img):
        array = img.numpy() if isinstance(img, Tensor) else np.asarray(img)
        channels = array.shape[0 if self.data_format == "CHW" else -1] if array.ndim == 3 else 1
        mean, std = self.mean[:channels], self.std[:channels]
        return normalize(img, mean, std, self.data_format, self.to_rgb)


def _crop(img, top: int, left: int, height: int, width: int):
    array = _as_array(img)
    return _like(np.ascontiguousarray(array[top : top + height, left : left + width]), img)


class CenterCrop(BaseTransform):
    def __init__(self, size, keys=None) -> None:
        self.size = _pair(size)

    def _apply_image(self, img):
        h, w = _as_array(img).shape[:2]
        th, tw = self.size
        return _crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


class RandomCrop(BaseTransform):
    def __init__(
        self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant", keys=None
    ) -> None:
        self.size, self.padding, self.pad_if_needed, self.fill, self.padding_mode = (
            _pair(size),
            padding,
            pad_if_needed,
            fill,
            padding_mode,
        )

    def _pad(self, array: np.ndarray, pad_h: int, pad_w: int) -> np.ndarray:
        widths = [(pad_h, pad_h), (pad_w, pad_w)] + [(0, 0)] * (array.ndim - 2)
        if self.padding_mode == "constant":
            return np.pad(array, widths, mode="constant", constant_values=self.fill)
        return np.pad(
            array, widths, mode={"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[self.padding_mode]
        )

    def _apply_image(self, img):
        array = _as_array(img)
        if self.padding is not None:
            pad = _pair(self.padding)
            array = self._pad(array, pad[0], pad[1])
        th, tw = self.size
        h, w = array.shape[:2]
        if self.pad_if_needed and (h < th or w < tw):
            array = self._pad(array, max(0, th - h), max(0, tw - w))
            h, w = array.shape[:2]
        if h < th or w < tw:
            raise ValueError(
                f"RandomCrop: image of size {(h, w)} is smaller than the crop {self.size}; set pad_if_needed=True"
            )
        top = int(generator().integers(0, h - th + 1))
        left = int(generator().integers(0, w - tw + 1))
        return _like(np.ascontiguousarray(array[top : top + th, left : left + tw]), img)


class RandomHorizontalFlip(BaseTransform):
    def __init__(self, prob: float = 0.5, keys=None) -> None:
        self.prob = prob

    def _apply_image(self, img):
        if generator().random() < self.prob:
            return _like(np.ascontiguousarray(_as_array(img)[:, ::-1]), img)
        return img


class RandomVerticalFlip(BaseTransform):
    def __init__(self, prob: float = 0.5, keys=None) -> None:
        self.prob = prob

    def _apply_image(self, img):
        if generator().random() < self.prob:
            return _like(np.ascontiguousarray(_as_array(img)[::-1]), img)
        return img


class Transpose(BaseTransform):
    """HWC -> CHW (or any order), as Paddle's ``Transpose``."""

    def __init__(self, order=(2, 0, 1), keys=None) -> None:
        self.order = order

    def _apply_image(self, img):
        array = _as_array(img)
        if array.ndim == 2:
            array = array[..., None]
        return np.ascontiguousarray(array.transpose(self.order))
