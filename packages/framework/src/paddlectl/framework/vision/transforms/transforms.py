"""``paddle.vision.transforms``' classes. Random choices come from Python's ``random`` module (and
``numpy.random`` where Paddle uses it), draw for draw as Paddle makes them, so ``random.seed(s)``
(with ``np.random.seed(s)``) reproduces Paddle's augmentations exactly."""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Sequence

import numpy as np

from ...core.tensor import Tensor
from . import _tensor
from . import functional as F

__all__ = [
    "BaseTransform",
    "BrightnessTransform",
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ContrastTransform",
    "Grayscale",
    "HueTransform",
    "Normalize",
    "Pad",
    "RandomAffine",
    "RandomCrop",
    "RandomErasing",
    "RandomHorizontalFlip",
    "RandomPerspective",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomVerticalFlip",
    "Resize",
    "SaturationTransform",
    "ToTensor",
    "Transpose",
]


def _image_size(img) -> tuple[int, int]:
    """(width, height) of a PIL image, HWC array or CHW/NCHW Tensor."""
    return F._size_wh(img, F._kind(img, "transform"))


def _probability(prob: float) -> float:
    if not 0 <= prob <= 1:
        raise ValueError(f"prob must be between 0 and 1, got {prob}")
    return prob


def _pair(size, name: str) -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if not isinstance(size, Sequence) or len(size) != 2:
        raise ValueError(f"{name} must be an int or a (height, width) pair, got {size!r}")
    return size


def _range(value, name: str) -> Sequence[float]:
    if not isinstance(value, Sequence) or len(value) != 2 or value[0] > value[1]:
        raise ValueError(f"{name} should be a (min, max) pair, got {value!r}")
    return value


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms) -> None:
        self.transforms = transforms

    def __call__(self, data):
        for transform in self.transforms:
            data = transform(data)
        return data

    def __repr__(self) -> str:
        return self.__class__.__name__ + "(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class BaseTransform:
    """Applies ``_apply_<key>`` to each element of a tuple input, one key per element ('image',
    'boxes', 'mask', 'coords'); extra elements pass through. ``_get_params`` runs once per call, so
    one random draw can serve every element."""

    def __init__(self, keys=None) -> None:
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, Sequence) or isinstance(keys, str):
            raise ValueError(f"keys should be a sequence of names such as ('image', 'mask'), got {keys!r}")
        for key in keys:
            if self._get_apply(key) is None:
                raise NotImplementedError(f"{key} is unsupported data structure")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs):
        return None

    def __call__(self, inputs):
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = [self._get_apply(key)(item) for key, item in zip(self.keys, inputs, strict=False)]
        outputs.extend(inputs[len(self.keys) :])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key):
        return getattr(self, f"_apply_{key}", None)

    def _apply_image(self, image):
        raise NotImplementedError

    def _apply_boxes(self, boxes):
        raise NotImplementedError

    def _apply_mask(self, mask):
        raise NotImplementedError

    def _apply_coords(self, coords):
        raise NotImplementedError


class ToTensor(BaseTransform):
    def __init__(self, data_format: str = "CHW", keys=None) -> None:
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img):
        return F.to_tensor(img, self.data_format)


class Resize(BaseTransform):
    def __init__(self, size, interpolation: str = "bilinear", keys=None) -> None:
        super().__init__(keys)
        F._resize_target(1, 1, size)  # validates size
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img):
        return F.resize(img, self.size, self.interpolation)


class RandomResizedCrop(BaseTransform):
    """A crop of random area (``scale`` of the image) and aspect (``ratio``), resized to ``size``."""

    def __init__(
        self, size, scale=(0.08, 1.0), ratio=(3.0 / 4, 4.0 / 3), interpolation: str = "bilinear", keys=None
    ) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size")
        self.scale, self.ratio = _range(scale, "scale"), _range(ratio, "ratio")
        self.interpolation = interpolation

    def _get_param(self, image, attempts: int = 10) -> tuple[int, int, int, int]:
        width, height = _image_size(image)
        area = height * width
        for _ in range(attempts):
            target_area = np.random.uniform(*self.scale) * area
            log_ratio = tuple(math.log(x) for x in self.ratio)
            aspect_ratio = math.exp(np.random.uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return random.randint(0, height - h), random.randint(0, width - w), h, w
        in_ratio = width / height
        w, h = width, height
        if in_ratio < min(self.ratio):
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            w = int(round(h * max(self.ratio)))
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img):
        i, j, h, w = self._get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    def __init__(self, size, keys=None) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size")

    def _apply_image(self, img):
        return F.center_crop(img, self.size)


class _RandomFlip(BaseTransform):
    _flip = None

    def __init__(self, prob: float = 0.5, keys=None) -> None:
        super().__init__(keys)
        self.prob = _probability(prob)

    def _apply_image(self, img):
        return self._flip(img) if random.random() < self.prob else img


class RandomHorizontalFlip(_RandomFlip):
    _flip = staticmethod(F.hflip)


class RandomVerticalFlip(_RandomFlip):
    _flip = staticmethod(F.vflip)


class Normalize(BaseTransform):
    """A scalar ``mean``/``std`` is used for every channel. Paddle repeats it three times, which turns
    a one-channel image into three; here it is cut to the image's channel count instead."""

    def __init__(self, mean=0.0, std=1.0, data_format: str = "CHW", to_rgb: bool = False, keys=None) -> None:
        super().__init__(keys)
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        self.data_format, self.to_rgb = data_format, to_rgb

    def _apply_image(self, img):
        shape = img.shape if isinstance(img, Tensor | np.ndarray) else np.shape(np.asarray(img))
        channels = (shape[-3] if self.data_format == "CHW" else shape[-1]) if len(shape) >= 3 else 1
        mean = self.mean[:channels] if len(self.mean) > channels else self.mean
        std = self.std[:channels] if len(self.std) > channels else self.std
        return F.normalize(img, mean, std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """HWC -> CHW by default (or any ``order``); PIL images become arrays, HxW gains a channel axis."""

    def __init__(self, order=(2, 0, 1), keys=None) -> None:
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img):
        if F._kind(img, "Transpose") == "tensor":
            return img.transpose(list(self.order))
        array = np.asarray(img)
        return (array[..., None] if array.ndim == 2 else array).transpose(self.order)


def _check_input(value, name: str, center: float = 1, bound=(0, float("inf")), clip_first_on_zero: bool = True):
    """A jitter strength as a [min, max] factor range around ``center``; None when it is a no-op."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"if {name} is a single number, it must be non negative, got {value}")
        value = [center - value, center + value]
        if clip_first_on_zero:
            value[0] = max(value[0], 0)
    elif isinstance(value, list | tuple) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, got {value!r}")
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2, got {value!r}")
    return None if value[0] == value[1] == center else value


class _ColorTransform(BaseTransform):
    """Draws one factor uniformly from ``value``'s range per image and applies ``_adjust``."""

    _name = ""
    _center, _bound, _clip = 1, (0, float("inf")), True

    def __init__(self, value, keys=None) -> None:
        super().__init__(keys)
        self.value = _check_input(value, self._name, self._center, self._bound, self._clip)

    def _apply_image(self, img):
        if self.value is None:
            return img
        return self._adjust(img, random.uniform(self.value[0], self.value[1]))


class BrightnessTransform(_ColorTransform):
    _name, _adjust = "brightness", staticmethod(F.adjust_brightness)


class ContrastTransform(_ColorTransform):
    _name, _adjust = "contrast", staticmethod(F.adjust_contrast)


class SaturationTransform(_ColorTransform):
    _name, _adjust = "saturation", staticmethod(F.adjust_saturation)


class HueTransform(_ColorTransform):
    _name, _adjust = "hue", staticmethod(F.adjust_hue)
    _center, _bound, _clip = 0, (-0.5, 0.5), False


class ColorJitter(BaseTransform):
    """Brightness, contrast, saturation and hue jitter, in a random order per image."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0, keys=None) -> None:
        super().__init__(keys)
        self.brightness, self.contrast, self.saturation, self.hue = brightness, contrast, saturation, hue

    def _apply_image(self, img):
        pairs = (
            (BrightnessTransform, self.brightness),
            (ContrastTransform, self.contrast),
            (SaturationTransform, self.saturation),
            (HueTransform, self.hue),
        )
        transforms = [cls(value, self.keys) for cls, value in pairs if value is not None]
        random.shuffle(transforms)
        return Compose(transforms)(img)


class RandomCrop(BaseTransform):
    def __init__(
        self, size, padding=None, pad_if_needed: bool = False, fill=0, padding_mode: str = "constant", keys=None
    ) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size")
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def _get_param(self, img, output_size) -> tuple[int, int, int, int]:
        w, h = _image_size(img)
        th, tw = output_size
        if w == tw and h == th:
            return 0, 0, h, w
        if h < th or w < tw:
            raise ValueError(
                f"RandomCrop: the image ({h}x{w}) is smaller than the crop ({th}x{tw}); pass pad_if_needed=True"
            )
        return random.randint(0, h - th), random.randint(0, w - tw), th, tw

    def _apply_image(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = _image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, (self.size[1] - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, (0, self.size[0] - h), self.fill, self.padding_mode)
        return F.crop(img, *self._get_param(img, self.size))


class Pad(BaseTransform):
    def __init__(self, padding, fill=0, padding_mode: str = "constant", keys=None) -> None:
        super().__init__(keys)
        F._borders(padding)  # validates padding
        if padding_mode not in F._PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {F._PADDING_MODES}, got {padding_mode!r}")
        self.padding = tuple(padding) if isinstance(padding, list) else padding
        self.fill = tuple(fill) if isinstance(fill, list) else fill
        self.padding_mode = padding_mode

    def _apply_image(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


def _check_sequence_input(x, name: str, req_sizes) -> None:
    if not isinstance(x, Sequence) or len(x) not in req_sizes:
        sizes = " or ".join(str(s) for s in req_sizes)
        raise ValueError(f"{name} should be a sequence of length {sizes}, got {x!r}")


def _setup_angle(x, name: str, req_sizes=(2,)) -> list[float]:
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"if {name} is a single number, it must be positive, got {x}")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


class RandomAffine(BaseTransform):
    """Random rotation, translation (fraction of the size), scale and shear, in Paddle's draw order."""

    def __init__(
        self,
        degrees,
        translate=None,
        scale=None,
        shear=None,
        interpolation: str = "nearest",
        fill=0,
        center=None,
        keys=None,
    ) -> None:
        super().__init__(keys)
        self.degrees = _setup_angle(degrees, "degrees")
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"interpolation must be 'nearest', 'bilinear' or 'bicubic', got {interpolation!r}")
        if translate is not None:
            _check_sequence_input(translate, "translate", (2,))
            if not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError(f"translate values should be between 0 and 1, got {translate!r}")
        if scale is not None:
            _check_sequence_input(scale, "scale", (2,))
            if not all(s > 0 for s in scale):
                raise ValueError(f"scale values should be positive, got {scale!r}")
        if center is not None:
            _check_sequence_input(center, "center", (2,))
        self.interpolation, self.translate, self.scale, self.center = interpolation, translate, scale, center
        self.shear = None if shear is None else _setup_angle(shear, "shear", (2, 4))
        self.fill = 0 if fill is None else fill

    def _get_param(self, img_size, degrees, translate=None, scale_ranges=None, shears=None):
        angle = random.uniform(degrees[0], degrees[1])
        translations = (0, 0)
        if translate is not None:
            max_dx, max_dy = float(translate[0] * img_size[0]), float(translate[1] * img_size[1])
            translations = (int(random.uniform(-max_dx, max_dx)), int(random.uniform(-max_dy, max_dy)))
        scale = 1.0 if scale_ranges is None else random.uniform(scale_ranges[0], scale_ranges[1])
        shear_x, shear_y = 0.0, 0.0
        if shears is not None:
            shear_x = random.uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = random.uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def _apply_image(self, img):
        params = self._get_param(list(_image_size(img)), self.degrees, self.translate, self.scale, self.shear)
        return F.affine(img, *params, interpolation=self.interpolation, fill=self.fill, center=self.center)


class RandomRotation(BaseTransform):
    def __init__(
        self, degrees, interpolation: str = "nearest", expand: bool = False, center=None, fill=0, keys=None
    ) -> None:
        super().__init__(keys)
        self.degrees = _setup_angle(degrees, "degrees")
        self.interpolation, self.expand, self.center, self.fill = interpolation, expand, center, fill

    def _apply_image(self, img):
        angle = random.uniform(self.degrees[0], self.degrees[1])
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class RandomPerspective(BaseTransform):
    """With probability ``prob``, move each corner inwards by up to ``distortion_scale`` of half the size."""

    def __init__(
        self, prob: float = 0.5, distortion_scale: float = 0.5, interpolation: str = "nearest", fill=0, keys=None
    ) -> None:
        super().__init__(keys)
        self.prob = _probability(prob)
        if not 0 <= distortion_scale <= 1:
            raise ValueError(f"distortion_scale must be between 0 and 1, got {distortion_scale}")
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"interpolation must be 'nearest', 'bilinear' or 'bicubic', got {interpolation!r}")
        self.distortion_scale, self.interpolation, self.fill = distortion_scale, interpolation, fill

    def get_params(self, width: int, height: int, distortion_scale: float):
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))

        def low(extent: int) -> int:
            return int(random.uniform(0, extent + 1))

        def high(size: int, extent: int) -> int:
            return int(random.uniform(size - extent - 1, size))

        topleft = [low(dx), low(dy)]
        topright = [high(width, dx), low(dy)]
        botright = [high(width, dx), high(height, dy)]
        botleft = [low(dx), high(height, dy)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def _apply_image(self, img):
        width, height = _image_size(img)
        if random.random() < self.prob:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, self.fill)
        return img


class Grayscale(BaseTransform):
    def __init__(self, num_output_channels: int = 1, keys=None) -> None:
        super().__init__(keys)
        self.num_output_channels = num_output_channels

    def _apply_image(self, img):
        return F.to_grayscale(img, self.num_output_channels)


class RandomErasing(BaseTransform):
    """With probability ``prob``, fill a random box (``scale`` of the area, aspect in ``ratio``) with
    ``value`` (a number, one per channel, or 'random' for Gaussian noise)."""

    def __init__(
        self, prob: float = 0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace: bool = False, keys=None
    ) -> None:
        super().__init__(keys)
        self.prob = _probability(prob)
        self.scale, self.ratio = _range(scale, "scale"), _range(ratio, "ratio")
        if not (scale[0] >= 0 and scale[1] <= 1 and ratio[0] >= 0):
            raise ValueError(f"scale must lie in [0, 1] and ratio be non-negative, got {scale!r}, {ratio!r}")
        if isinstance(value, str) and value != "random":
            raise ValueError(f"value must be a number, a sequence or 'random', got {value!r}")
        if not isinstance(value, numbers.Number | str | tuple | list):
            raise TypeError(f"value must be a number, a sequence or 'random', got {type(value).__name__}")
        if isinstance(value, tuple | list) and len(value) not in (1, 3):
            raise ValueError(f"value should be a single number or one per channel (3), got {value!r}")
        self.value, self.inplace = value, inplace

    def _get_param(self, img, value):
        kind = F._kind(img, "RandomErasing")
        if kind == "tensor":
            c, h, w = img.shape[-3:]
        else:
            h, w, c = np.asarray(img).shape[-3:]
        log_ratio = np.log(self.ratio)
        for _ in range(10):
            erase_area = np.random.uniform(*self.scale) * h * w
            aspect_ratio = np.exp(np.random.uniform(*log_ratio))
            erase_h = int(round(np.sqrt(erase_area * aspect_ratio)))
            erase_w = int(round(np.sqrt(erase_area / aspect_ratio)))
            if erase_h >= h or erase_w >= w:
                continue
            if kind == "tensor":
                dtype = img.numpy().dtype
                v = _tensor.normal_noise((c, erase_h, erase_w), dtype) if value is None else None
                v = np.asarray(value, dtype=dtype)[:, None, None] if v is None else v
            else:
                v = np.random.normal(size=[erase_h, erase_w, c]) * 255 if value is None else np.array(value)[None, None]
            top = np.random.randint(0, h - erase_h + 1)
            left = np.random.randint(0, w - erase_w + 1)
            return top, left, erase_h, erase_w, v
        return 0, 0, h, w, img

    def _apply_image(self, img):
        if random.random() >= self.prob:
            return img
        value = [self.value] if isinstance(self.value, numbers.Number) else self.value
        top, left, erase_h, erase_w, v = self._get_param(img, None if isinstance(value, str) else value)
        return F.erase(img, top, left, erase_h, erase_w, v, self.inplace)
