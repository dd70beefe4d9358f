"""PIL-image backend of ``paddle.vision.transforms.functional``: the Pillow calls Paddle's
``functional_pil`` makes, so PIL inputs give Paddle's pixels exactly."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from ...core.tensor import Tensor

INTERPOLATION = {
    "nearest": Image.Resampling.NEAREST,
    "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC,
    "box": Image.Resampling.BOX,
    "lanczos": Image.Resampling.LANCZOS,
    "hamming": Image.Resampling.HAMMING,
}


def _interp(interpolation: str):
    if interpolation not in INTERPOLATION:
        raise ValueError(f"interpolation must be one of {sorted(INTERPOLATION)} for PIL images, got {interpolation!r}")
    return INTERPOLATION[interpolation]


def _fill(fill, img: Image.Image):
    """An int fill becomes an RGB triple (Paddle's rule); single-band images keep the int, which
    Paddle's tuple makes Pillow reject."""
    return (fill,) * 3 if isinstance(fill, int) and len(img.getbands()) > 1 else fill


def to_tensor(pic: Image.Image, data_format: str) -> Tensor:
    if pic.mode in ("I", "I;16"):
        array = np.asarray(pic, np.int32)
    elif pic.mode == "F":
        array = np.asarray(pic, np.float32)
    elif pic.mode == "1":
        array = 255 * np.asarray(pic, np.uint8)
    else:
        array = np.asarray(pic)
    channels = 3 if pic.mode == "YCbCr" else 1 if pic.mode == "I;16" else len(pic.mode)
    if array.dtype == np.uint8:
        array = array.astype(np.float32) / np.float32(255.0)
    array = array.reshape(pic.size[1], pic.size[0], channels)
    if data_format == "CHW":
        array = array.transpose(2, 0, 1)
    return Tensor._wrap(np.ascontiguousarray(array))


def resize(img: Image.Image, size: tuple[int, int], interpolation: str) -> Image.Image:
    """``size`` is the final (height, width)."""
    return img.resize(size[::-1], _interp(interpolation))


def pad(img: Image.Image, borders: tuple[int, int, int, int], fill, padding_mode: str) -> Image.Image:
    """``borders`` = (left, top, right, bottom)."""
    left, top, right, bottom = borders
    palette = img.getpalette() if img.mode == "P" else None
    if padding_mode == "constant":
        out = ImageOps.expand(img, border=borders, fill=fill)
    else:
        array = np.asarray(img)
        widths = ((top, bottom), (left, right)) + ((0, 0),) * (array.ndim - 2)
        out = Image.fromarray(np.pad(array, widths, padding_mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def crop(img: Image.Image, top: int, left: int, height: int, width: int) -> Image.Image:
    return img.crop((left, top, left + width, top + height))


def hflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img: Image.Image, factor: float) -> Image.Image:
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img: Image.Image, factor: float) -> Image.Image:
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img: Image.Image, factor: float) -> Image.Image:
    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img: Image.Image, hue_factor: float) -> Image.Image:
    """Shift the H channel of PIL's HSV by ``hue_factor`` of a turn (grey modes are returned as-is)."""
    if img.mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    shifted = ((np.asarray(h, dtype=np.int16) + int(hue_factor * 255)) % 256).astype(np.uint8)
    return Image.merge("HSV", (Image.fromarray(shifted, "L"), s, v)).convert(img.mode)


def affine(img: Image.Image, matrix, interpolation: str, fill) -> Image.Image:
    return img.transform(img.size, Image.Transform.AFFINE, matrix, _interp(interpolation), _fill(fill, img))


def rotate(img: Image.Image, angle: float, interpolation: str, expand: bool, center, fill) -> Image.Image:
    return img.rotate(angle, _interp(interpolation), expand, center, fillcolor=_fill(fill, img))


def perspective(img: Image.Image, coeffs, interpolation: str, fill) -> Image.Image:
    return img.transform(img.size, Image.Transform.PERSPECTIVE, coeffs, _interp(interpolation), _fill(fill, img))


def to_grayscale(img: Image.Image, num_output_channels: int) -> Image.Image:
    grey = img.convert("L")
    if num_output_channels == 1:
        return grey
    array = np.asarray(grey, dtype=np.uint8)
    return Image.fromarray(np.dstack([array, array, array]), "RGB")


def erase(img: Image.Image, i: int, j: int, h: int, w: int, v) -> Image.Image:
    """The result keeps the input's mode (Paddle forces 'RGB', which fails on grey images)."""
    array = np.array(img, dtype=np.uint8)
    array[i : i + h, j : j + w, ...] = v
    return Image.fromarray(array, img.mode)
