"""``paddle.vision.transforms.functional``: one function per image operation, dispatched on the input
as Paddle does: PIL images go through Pillow, ``numpy`` HWC arrays through OpenCV, Tensors (CHW)
through framework ops. Each backend makes the library calls Paddle makes, so pixels agree.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from PIL import Image

from ...core.tensor import Tensor
from ...errors import DTypeError, ShapeError
from . import _cv2, _grid, _pil, _tensor

__all__ = [
    "adjust_brightness",
    "adjust_contrast",
    "adjust_hue",
    "adjust_saturation",
    "affine",
    "center_crop",
    "crop",
    "erase",
    "hflip",
    "normalize",
    "pad",
    "perspective",
    "resize",
    "rotate",
    "to_grayscale",
    "to_tensor",
    "vflip",
]

_PADDING_MODES = ("constant", "edge", "reflect", "symmetric")
_BACKENDS = {"pil": _pil, "numpy": _cv2, "tensor": _tensor}


def _is_pil_image(img) -> bool:
    return isinstance(img, Image.Image)


def _is_tensor_image(img) -> bool:
    return isinstance(img, Tensor)


def _is_numpy_image(img) -> bool:
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _kind(img, what: str) -> str:
    """'pil', 'numpy' or 'tensor'; anything else is a typed error naming what is accepted."""
    if isinstance(img, Image.Image):
        return "pil"
    if isinstance(img, np.ndarray):
        if img.ndim not in (2, 3):
            raise ShapeError(f"{what}: a numpy image must be HxW or HxWxC, got shape {list(img.shape)}")
        return "numpy"
    if isinstance(img, Tensor):
        if img.ndim not in (3, 4):
            raise ShapeError(f"{what}: a Tensor image must be CHW (or NCHW), got shape {list(img.shape)}")
        return "tensor"
    raise DTypeError(
        f"{what}: img should be a PIL Image, a numpy.ndarray (HxW or HxWxC) or a Tensor (CHW), got {type(img).__name__}"
    )


def _size_wh(img, kind: str) -> tuple[int, int]:
    if kind == "pil":
        return img.size
    if kind == "numpy":
        return img.shape[1], img.shape[0]
    return img.shape[-1], img.shape[-2]


def _number(value, name: str, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise DTypeError(f"{what}: {name} must be a number, got {type(value).__name__}")


def _ints(values, name: str, what: str, minimum: int | None) -> None:
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or (minimum is not None and v < minimum):
            bound = "" if minimum is None else f" >= {minimum}"
            raise ValueError(f"{what}: {name} must be integers{bound}, got {values!r}")


def _check_data_format(data_format: str) -> None:
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"data_format should be 'CHW' or 'HWC', got {data_format!r}")


def to_tensor(pic, data_format: str = "CHW") -> Tensor:
    """uint8 images become float32 in [0, 1]; other dtypes keep their values (as in Paddle)."""
    kind = _kind(pic, "to_tensor")
    _check_data_format(data_format)
    if kind == "pil":
        return _pil.to_tensor(pic, data_format)
    if kind == "numpy":
        return _cv2.to_tensor(pic, data_format)
    return pic if data_format == "CHW" else pic.transpose((1, 2, 0))


def _resize_target(w: int, h: int, size) -> tuple[int, int] | None:
    """(height, width) to resize to; an int scales the shorter side to it; None when nothing changes."""
    if isinstance(size, bool) or not (isinstance(size, int) or (isinstance(size, Sequence) and len(size) == 2)):
        raise TypeError(f"resize: size must be an int or a (height, width) pair, got {size!r}")
    _ints(size if isinstance(size, Sequence) else [size], "size", "resize", 1)
    if not isinstance(size, int):
        return int(size[0]), int(size[1])
    if (w <= h and w == size) or (h <= w and h == size):
        return None
    return (int(size * h / w), size) if w < h else (size, int(size * w / h))


def resize(img, size, interpolation: str = "bilinear"):
    kind = _kind(img, "resize")
    target = _resize_target(*_size_wh(img, kind), size)
    if target is None:
        return img
    return _BACKENDS[kind].resize(img, target, interpolation)


def _borders(padding) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a (left/right, top/bottom) pair or four values."""
    if isinstance(padding, numbers.Number):
        _ints([padding], "padding", "pad", 0)
        return (int(padding),) * 4
    if not isinstance(padding, list | tuple) or len(padding) not in (2, 4):
        raise ValueError(f"padding must be an int or a 2 or 4 element sequence, got {padding!r}")
    _ints(padding, "padding", "pad", 0)
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    return tuple(padding)


def pad(img, padding, fill=0, padding_mode: str = "constant"):
    kind = _kind(img, "pad")
    borders = _borders(padding)
    if not isinstance(fill, numbers.Number | str | list | tuple):
        raise TypeError(f"pad: fill must be a number, a string or a sequence, got {type(fill).__name__}")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"pad: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
    return _BACKENDS[kind].pad(img, borders, fill, padding_mode)


def crop(img, top: int, left: int, height: int, width: int):
    kind = _kind(img, "crop")
    _ints([top, left], "top and left", "crop", None)  # negative: PIL pads, as in Paddle
    _ints([height, width], "height and width", "crop", 1)
    return _BACKENDS[kind].crop(img, top, left, height, width)


def center_crop(img, output_size):
    kind = _kind(img, "center_crop")
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    w, h = _size_wh(img, kind)
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    return _BACKENDS[_kind(img, "hflip")].hflip(img)


def vflip(img):
    return _BACKENDS[_kind(img, "vflip")].vflip(img)


def _adjust(op: str, img, factor: float, name: str):
    """A colour adjustment by a non-negative factor, on the input's backend."""
    kind = _kind(img, op)
    _number(factor, name, op)
    if factor < 0:
        raise ValueError(f"{op}: {name} should be non-negative, got {factor}")
    return getattr(_BACKENDS[kind], op)(img, factor)


def adjust_brightness(img, brightness_factor: float):
    return _adjust("adjust_brightness", img, brightness_factor, "brightness_factor")


def adjust_contrast(img, contrast_factor: float):
    return _adjust("adjust_contrast", img, contrast_factor, "contrast_factor")


def adjust_saturation(img, saturation_factor: float):
    return _adjust("adjust_saturation", img, saturation_factor, "saturation_factor")


def adjust_hue(img, hue_factor: float):
    kind = _kind(img, "adjust_hue")
    _number(hue_factor, "hue_factor", "adjust_hue")
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor must be in [-0.5, 0.5], got {hue_factor}")
    return _BACKENDS[kind].adjust_hue(img, hue_factor)


def _get_affine_matrix(center, angle, translate, scale, shear) -> list[float]:
    """The inverse affine matrix (output -> input pixel) Paddle's PIL and Tensor paths sample with."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    cx, cy = center
    tx, ty = translate
    matrix = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty) + cx
    matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty) + cy
    return matrix


def _check_center(center, what: str) -> None:
    if center is not None and (not isinstance(center, list | tuple) or len(center) != 2):
        raise ValueError(f"{what}: center should be an (x, y) pair, got {center!r}")


def _check_affine(angle, translate, scale, shear, interpolation, center) -> list[float]:
    if isinstance(angle, bool) or not isinstance(angle, int | float):
        raise TypeError(f"affine: angle should be an int or float, got {type(angle).__name__}")
    if not isinstance(translate, list | tuple) or len(translate) != 2:
        raise ValueError(f"affine: translate should be a sequence of two numbers, got {translate!r}")
    if scale <= 0.0:
        raise ValueError(f"affine: scale should be positive, got {scale}")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if not isinstance(shear, list | tuple) or len(shear) not in (1, 2):
        raise ValueError(f"affine: shear should be a number or a sequence of one or two numbers, got {shear!r}")
    if not isinstance(interpolation, str):
        raise TypeError("affine: interpolation should be a string")
    _check_center(center, "affine")
    return [shear[0], shear[0]] if len(shear) == 1 else list(shear)


def affine(img, angle, translate, scale, shear, interpolation: str = "nearest", fill=0, center=None):
    kind = _kind(img, "affine")
    shear = _check_affine(angle, translate, scale, shear, interpolation, center)
    angle = float(angle)
    if kind == "pil":
        w, h = img.size
        center = [w * 0.5, h * 0.5] if center is None else center
        return _pil.affine(img, _get_affine_matrix(center, angle, translate, scale, shear), interpolation, fill)
    if kind == "numpy":
        return _cv2.affine(img, angle, translate, scale, shear, interpolation, fill, center)
    centre = [0.0, 0.0]
    if center is not None:
        # Paddle pairs center with (shape[-2], shape[-1]) as (width, height); kept so results agree.
        centre = [c - s * 0.5 for c, s in zip(center, (img.shape[-2], img.shape[-1]), strict=True)]
    matrix = _get_affine_matrix(centre, angle, [float(t) for t in translate], scale, shear)
    return _grid.affine(img, matrix, interpolation, (fill,) * 3 if isinstance(fill, int) else fill)


def rotate(img, angle, interpolation: str = "nearest", expand: bool = False, center=None, fill=0):
    kind = _kind(img, "rotate")
    _number(angle, "angle", "rotate")
    _check_center(center, "rotate")
    center = tuple(center) if isinstance(center, list) else center
    fill = tuple(fill) if isinstance(fill, list) else fill
    return {"pil": _pil, "numpy": _cv2, "tensor": _grid}[kind].rotate(img, angle, interpolation, expand, center, fill)


def _get_perspective_coeffs(startpoints, endpoints) -> list[float]:
    """The 8 coefficients mapping output (end) points back to input (start) points, least squares."""
    a = np.zeros((2 * len(startpoints), 8))
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints, strict=True)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    return list(np.linalg.lstsq(a, np.array(startpoints).reshape(8), rcond=None)[0])


def perspective(img, startpoints, endpoints, interpolation: str = "nearest", fill=0):
    kind = _kind(img, "perspective")
    if np.shape(startpoints) != (4, 2) or np.shape(endpoints) != (4, 2):
        raise ValueError("perspective: startpoints and endpoints must each be four [x, y] points")
    if kind == "numpy":
        return _cv2.perspective(img, startpoints, endpoints, interpolation, fill)
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    return {"pil": _pil, "tensor": _grid}[kind].perspective(img, coeffs, interpolation, fill)


def to_grayscale(img, num_output_channels: int = 1):
    kind = _kind(img, "to_grayscale")
    if num_output_channels not in (1, 3):
        raise ValueError(f"num_output_channels should be either 1 or 3, got {num_output_channels}")
    return _BACKENDS[kind].to_grayscale(img, num_output_channels)


def normalize(img, mean, std, data_format: str = "CHW", to_rgb: bool = False):
    """(img - mean) / std per channel; Tensors stay Tensors (``to_rgb`` ignored, as in Paddle), PIL
    images and arrays come back as float arrays."""
    kind = _kind(img, "normalize")
    _check_data_format(data_format)
    shape = img.shape if kind != "pil" else np.shape(np.asarray(img))
    channels = shape[-3 if data_format == "CHW" else -1] if len(shape) >= 3 else 1
    for name, values in (("mean", mean), ("std", std)):
        if np.size(values) not in (1, channels) and channels != 1:  # one channel broadcasts, as in Paddle
            raise ShapeError(f"normalize: {name} needs 1 or {channels} values (one per channel), got {values!r}")
    if kind == "tensor":
        return _tensor.normalize(img, mean, std, data_format)
    array = np.array(img).astype(np.float32) if kind == "pil" else img
    return _cv2.normalize(array, mean, std, data_format, to_rgb)


def erase(img, i: int, j: int, h: int, w: int, v, inplace: bool = False):
    """Fill the box (top ``i``, left ``j``, ``h`` x ``w``) with ``v``; PIL images are always copied."""
    kind = _kind(img, "erase")
    _ints([i, j], "i and j", "erase", 0)
    _ints([h, w], "h and w", "erase", 1)
    if np.ndim(v) == 1 and np.size(v) not in (1, (img.shape[-3] if kind == "tensor" else np.shape(img)[-1])):
        raise ShapeError(f"erase: v needs 1 value or one per channel, got {np.size(v)}")
    if kind == "pil":
        return _pil.erase(img, i, j, h, w, v)
    return {"numpy": _cv2, "tensor": _tensor}[kind].erase(img, i, j, h, w, v, inplace)
