"""Tensor (CHW, or NCHW where Paddle allows it) backend of ``paddle.vision.transforms.functional``.

Resizing and padding run through the framework's ``interpolate`` and ``pad`` ops, as Paddle's
``functional_tensor`` does; the colour and geometric warps are Paddle's formulas on the pixel
array (preprocessing happens before autograd, so these return fresh leaf tensors).
"""

from __future__ import annotations

import numpy as np

from ...core.tensor import Tensor
from ...nn import functional as F
from ...ops import random as random_ops

_GREY_WEIGHTS = np.array([0.2989, 0.5870, 0.1140], dtype=np.float32)


def _wrap(array: np.ndarray) -> Tensor:
    return Tensor._wrap(np.ascontiguousarray(array))


def resize(img: Tensor, size: tuple[int, int], interpolation: str) -> Tensor:
    """Integer images are resized in float32 and truncated back, which is what Paddle's uint8
    kernel computes."""
    dtype = img.numpy().dtype
    work = img if dtype.kind == "f" else img.astype("float32")
    out = F.interpolate(work.unsqueeze(0), size=size, mode=interpolation, data_format="NCHW").squeeze(0)
    return out if dtype.kind == "f" else out.astype(str(dtype))


def pad(img: Tensor, borders: tuple[int, int, int, int], fill, padding_mode: str) -> Tensor:
    if padding_mode == "symmetric":
        raise ValueError(
            "pad: padding_mode 'symmetric' is not supported for Tensor images (as in Paddle); use 'reflect'"
        )
    left, top, right, bottom = borders
    mode = "replicate" if padding_mode == "edge" else padding_mode
    out = F.pad(img.unsqueeze(0), pad=[left, right, top, bottom], mode=mode, value=float(fill), data_format="NCHW")
    return out.squeeze(0)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    return img[..., top : top + height, left : left + width]


def hflip(img: Tensor) -> Tensor:
    return img.flip(axis=[-1])


def vflip(img: Tensor) -> Tensor:
    return img.flip(axis=[-2])


def _grey(array: np.ndarray) -> np.ndarray:
    weights = _GREY_WEIGHTS.astype(array.dtype) if array.dtype.kind == "f" else _GREY_WEIGHTS
    return (array * weights.reshape(-1, 1, 1)).sum(axis=-3, keepdims=True).astype(array.dtype)


def to_grayscale(img: Tensor, num_output_channels: int) -> Tensor:
    array = img.numpy()
    grey = _grey(array)
    shape = list(grey.shape)
    shape[-3] = num_output_channels
    return _wrap(np.broadcast_to(grey, shape))


def normalize(img: Tensor, mean, std, data_format: str) -> Tensor:
    shape = (-1, 1, 1) if data_format == "CHW" else (-1,)
    mean = Tensor._wrap(np.asarray(mean, dtype=np.float32).reshape(shape))
    std = Tensor._wrap(np.asarray(std, dtype=np.float32).reshape(shape))
    return (img - mean) / std


def _blend(img: np.ndarray, target: np.ndarray, ratio: float) -> Tensor:
    top = 1.0 if img.dtype.kind == "f" else 255.0
    work = img.dtype if img.dtype.kind == "f" else np.float32
    a, b = img.astype(work), np.asarray(target, dtype=work)
    return _wrap((b + np.asarray(ratio, work) * (a - b)).clip(0, top).astype(img.dtype))


def _channels(array: np.ndarray) -> int:
    channels = array.shape[-3]
    if channels not in (1, 3):
        raise ValueError(f"expected a Tensor image with 1 or 3 channels (CHW), got {channels}")
    return channels


def adjust_brightness(img: Tensor, factor: float) -> Tensor:
    array = img.numpy()
    _channels(array)
    return _blend(array, np.zeros_like(array), factor)


def adjust_contrast(img: Tensor, factor: float) -> Tensor:
    array = img.numpy()
    work = array.dtype if array.dtype.kind == "f" else np.float32
    source = array if _channels(array) == 1 else _grey(array)
    return _blend(array, source.astype(work).mean(axis=(-3, -2, -1), keepdims=True), factor)


def adjust_saturation(img: Tensor, factor: float) -> Tensor:
    array = img.numpy()
    if _channels(array) == 1:
        return img
    return _blend(array, _grey(array), factor)


def _rgb_to_hsv(rgb: np.ndarray) -> np.ndarray:
    maxc, minc = rgb.max(axis=-3), rgb.min(axis=-3)
    equal = maxc == minc
    delta = maxc - minc
    s = delta / np.where(equal, 1.0, maxc).astype(rgb.dtype)
    r, g, b = rgb[..., 0, :, :], rgb[..., 1, :, :], rgb[..., 2, :, :]
    divisor = np.where(equal, 1.0, delta).astype(rgb.dtype)
    rc, gc, bc = (maxc - r) / divisor, (maxc - g) / divisor, (maxc - b) / divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (rc - bc + 2.0)
    hb = ((maxc != r) & (maxc != g)) * (gc - rc + 4.0)
    h = ((hr + hg + hb) / 6.0 + 1.0).astype(rgb.dtype)
    return np.stack([h - np.trunc(h), s, maxc], axis=-3)


def _hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    h, s, v = hsv[..., 0, :, :], hsv[..., 1, :, :], hsv[..., 2, :, :]
    f = h * 6.0
    i = np.floor(f)
    f = f - i
    i = i.astype(np.int32) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    table = np.stack([np.stack(row, axis=-3) for row in ([v, q, p, p, t, v], [t, v, v, q, p, p], [p, p, t, v, v, q])])
    picked = np.take_along_axis(table, i[None, ..., None, :, :], axis=-3)[..., 0, :, :]
    return np.moveaxis(picked, 0, -3).astype(hsv.dtype)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    array = img.numpy()
    if _channels(array) == 1:
        return img
    rgb = array.astype(np.float32) / np.float32(255.0) if array.dtype == np.uint8 else array
    hsv = _rgb_to_hsv(rgb)
    h = hsv[..., 0, :, :] + np.asarray(hue_factor, rgb.dtype)
    hsv[..., 0, :, :] = h - np.floor(h)
    out = _hsv_to_rgb(hsv)
    return _wrap((out * 255.0).astype(np.uint8) if array.dtype == np.uint8 else out)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v, inplace: bool) -> Tensor:
    array = img.numpy() if inplace else img.numpy().copy()
    v = np.asarray(v.numpy() if isinstance(v, Tensor) else v)
    array[..., i : i + h, j : j + w] = v.reshape(-1, 1, 1) if v.ndim == 1 else v  # one value per channel
    if inplace:
        img.set_value(array)
        return img
    return _wrap(array)


def normal_noise(shape, dtype) -> np.ndarray:
    """RandomErasing's noise patch for Tensor images: ``paddle.normal`` draws, so ``paddle.seed`` fixes it."""
    return random_ops.normal(shape, 0.0, 1.0).astype(dtype)
