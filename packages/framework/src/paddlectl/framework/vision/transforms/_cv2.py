"""NumPy (HWC) backend of ``paddle.vision.transforms.functional``: the OpenCV calls Paddle's
``functional_cv2`` makes, so array inputs give Paddle's pixels exactly (Paddle's defaults run arrays
through cv2, not Pillow). OpenCV drops a trailing channel axis of 1; it is put back."""

from __future__ import annotations

import math

import cv2
import numpy as np

from ...core.tensor import Tensor
from ...errors import ShapeError

INTERPOLATION = {
    "nearest": cv2.INTER_NEAREST,
    "bilinear": cv2.INTER_LINEAR,
    "area": cv2.INTER_AREA,
    "bicubic": cv2.INTER_CUBIC,
    "lanczos": cv2.INTER_LANCZOS4,
}
_BORDER = {
    "constant": cv2.BORDER_CONSTANT,
    "edge": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT_101,
    "symmetric": cv2.BORDER_REFLECT,
}


def _interp(interpolation: str) -> int:
    if interpolation not in INTERPOLATION:
        raise ValueError(f"interpolation must be one of {sorted(INTERPOLATION)} for arrays, got {interpolation!r}")
    return INTERPOLATION[interpolation]


def _keep_channel(original: np.ndarray, out: np.ndarray) -> np.ndarray:
    return out[:, :, None] if original.ndim == 3 and original.shape[2] == 1 and out.ndim == 2 else out


def to_tensor(pic: np.ndarray, data_format: str) -> Tensor:
    array = pic[:, :, None] if pic.ndim == 2 else pic
    if data_format == "CHW":
        array = array.transpose(2, 0, 1)
    if array.dtype == np.uint8:
        array = array.astype(np.float32) / np.float32(255.0)
    return Tensor._wrap(np.ascontiguousarray(array))


def resize(img: np.ndarray, size: tuple[int, int], interpolation: str) -> np.ndarray:
    """``size`` is the final (height, width)."""
    return _keep_channel(img, cv2.resize(img, dsize=(size[1], size[0]), interpolation=_interp(interpolation)))


def pad(img: np.ndarray, borders: tuple[int, int, int, int], fill, padding_mode: str) -> np.ndarray:
    """``borders`` = (left, top, right, bottom)."""
    left, top, right, bottom = borders
    out = cv2.copyMakeBorder(
        img, top=top, bottom=bottom, left=left, right=right, borderType=_BORDER[padding_mode], value=fill
    )
    return _keep_channel(img, out)


def crop(img: np.ndarray, top: int, left: int, height: int, width: int) -> np.ndarray:
    return img[top : top + height, left : left + width, ...]


def hflip(img: np.ndarray) -> np.ndarray:
    """HxWx1 stays HxWx1 (Paddle's cv2 path drops the axis here only, unlike its vflip)."""
    return _keep_channel(img, cv2.flip(img, 1))


def vflip(img: np.ndarray) -> np.ndarray:
    return _keep_channel(img, cv2.flip(img, 0))


def _lut(img: np.ndarray, table) -> np.ndarray:
    return _keep_channel(img, cv2.LUT(img, np.asarray(table).clip(0, 255).astype("uint8")))


def adjust_brightness(img: np.ndarray, factor: float) -> np.ndarray:
    return _lut(img.astype(np.uint8), [i * factor for i in range(256)])


def adjust_contrast(img: np.ndarray, factor: float) -> np.ndarray:
    """Paddle's cv2 path pivots on a fixed grey level of 74, not the image mean (kept for parity)."""
    return _lut(img, [(i - 74) * factor + 74 for i in range(256)])


def _is_grey(img: np.ndarray, what: str) -> bool:
    """True for HxW / HxWx1; colour operations need 3 channels otherwise (OpenCV's colour codes)."""
    if img.ndim == 2 or img.shape[2] == 1:
        return True
    if img.shape[2] != 3:
        raise ShapeError(f"{what}: a colour array image must be HxWx3 (RGB), got shape {list(img.shape)}")
    return False


def adjust_saturation(img: np.ndarray, factor: float) -> np.ndarray:
    """As Paddle's cv2 path: the blend weight is drawn from ``np.random`` in [1 - factor, 1 + factor].
    Grey images come back unchanged (Paddle's cv2 call fails on them)."""
    if _is_grey(img, "adjust_saturation"):
        return img
    dtype = img.dtype
    array = img.astype(np.float32)
    alpha = np.random.uniform(max(0, 1 - factor), 1 + factor)
    grey = cv2.cvtColor(array, cv2.COLOR_BGR2GRAY)[..., None]
    return (array * alpha + grey * (1 - alpha)).clip(0, 255).astype(dtype)


def adjust_hue(img: np.ndarray, hue_factor: float) -> np.ndarray:
    if _is_grey(img, "adjust_hue"):
        return img
    dtype = img.dtype
    h, s, v = cv2.split(cv2.cvtColor(img.astype(np.uint8), cv2.COLOR_BGR2HSV_FULL))
    h = ((h.astype(np.int32) + int(hue_factor * 255)) % 256).astype(np.uint8)
    return cv2.cvtColor(cv2.merge([h, s, v]), cv2.COLOR_HSV2BGR_FULL).astype(dtype)


def _warp_affine(img: np.ndarray, matrix, size: tuple[int, int], interpolation: str, fill) -> np.ndarray:
    out = cv2.warpAffine(img, matrix, dsize=size, flags=_interp(interpolation), borderValue=fill)
    return _keep_channel(img, out)


def affine(img: np.ndarray, angle, translate, scale, shear, interpolation: str, fill, center) -> np.ndarray:
    """Paddle's cv2 affine: rotation about ``center`` with shear folded in, then ``translate`` as the
    absolute offset column (Paddle's formula, which differs from its PIL path for non-zero angles)."""
    h, w = img.shape[:2]
    fill = (fill,) * 3 if isinstance(fill, int) else fill
    center = (w / 2.0, h / 2.0) if center is None else center
    rotation = cv2.getRotationMatrix2D(angle=angle, center=center, scale=scale)
    sx, sy = math.tan(math.radians(shear[0])), math.tan(math.radians(shear[1]))
    matrix = np.ones([2, 3])
    matrix[0] = rotation[0] + sy * rotation[1]
    matrix[1] = rotation[1] + sx * rotation[0]
    matrix[0, 2], matrix[1, 2] = translate
    return _warp_affine(img, matrix, (w, h), interpolation, fill)


def _expanded_size(w: int, h: int, angle: float, center) -> tuple[int, int]:
    """The bounding box of the rotated image, computed the way PIL's ``rotate(expand=True)`` does."""
    rad = -math.radians(angle)
    a, b = round(math.cos(rad), 15), round(math.sin(rad), 15)
    c = -a * center[0] - b * center[1] + center[0]
    f = b * center[0] - a * center[1] + center[1]
    corners = [(a * x + b * y + c, -b * x + a * y + f) for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    xs, ys = [p[0] for p in corners], [p[1] for p in corners]
    return math.ceil(max(xs)) - math.floor(min(xs)), math.ceil(max(ys)) - math.floor(min(ys))


def rotate(img: np.ndarray, angle: float, interpolation: str, expand: bool, center, fill) -> np.ndarray:
    h, w = img.shape[:2]
    center = (w / 2.0, h / 2.0) if center is None else center
    matrix = cv2.getRotationMatrix2D(center, angle, 1)
    if expand:
        nw, nh = _expanded_size(w, h, angle, center)
        matrix[0, 2] += (nw - w) * 0.5
        matrix[1, 2] += (nh - h) * 0.5
        w, h = int(nw), int(nh)
    return _warp_affine(img, matrix, (w, h), interpolation, fill)


def perspective(img: np.ndarray, startpoints, endpoints, interpolation: str, fill) -> np.ndarray:
    h, w = img.shape[:2]
    matrix = cv2.getPerspectiveTransform(np.array(startpoints, "float32"), np.array(endpoints, "float32"))
    out = cv2.warpPerspective(img, matrix, dsize=(w, h), flags=_interp(interpolation), borderValue=fill)
    return _keep_channel(img, out)


def to_grayscale(img: np.ndarray, num_output_channels: int) -> np.ndarray:
    """A grey input is already grey: it only gains the requested channel count."""
    if _is_grey(img, "to_grayscale"):
        grey = img.reshape(img.shape[0], img.shape[1], 1)
    else:
        grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)[:, :, None]
    return grey if num_output_channels == 1 else np.broadcast_to(grey, grey.shape[:2] + (3,))


def normalize(img: np.ndarray, mean, std, data_format: str, to_rgb: bool) -> np.ndarray:
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.float32(np.array(mean).reshape(shape))
    std = np.float32(np.array(std).reshape(shape))
    if to_rgb:
        img = img[..., ::-1]
    return (img - mean) / std


def erase(img: np.ndarray, i: int, j: int, h: int, w: int, v, inplace: bool) -> np.ndarray:
    out = img if inplace else img.copy()
    out[i : i + h, j : j + w, ...] = v
    return out
