"""PaddleSeg's transforms, by name and arguments: each takes and returns ``{"img", "label"}``.

``img`` is HWC RGB (uint8, float after ``Normalize``); ``label`` is HW class ids or None when
serving. Geometry moves both together: bilinear for the image, nearest for the label, so a label
never gains a value it did not have; padding fills the label with the ignore value. Random draws
come from the framework's generator, so ``Global.seed`` repeats a run.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from PIL import Image, ImageEnhance

from paddlectl.framework.errors import ConfigError
from paddlectl.framework.ops.random import generator


def _size_pair(value, what: str) -> tuple[int, int]:
    """``512`` or ``[w, h]`` -> ``(w, h)`` (PaddleSeg writes sizes width first)."""
    pair = [value, value] if isinstance(value, int) else value
    if not isinstance(pair, list | tuple) or len(pair) != 2 or not all(isinstance(v, int) and v > 0 for v in pair):
        raise ConfigError(f"{what} is {value!r}; give a positive size or [width, height]")
    return int(pair[0]), int(pair[1])


def _resize(data: dict, width: int, height: int) -> dict:
    data["img"] = cv2.resize(data["img"], (width, height), interpolation=cv2.INTER_LINEAR)
    if data.get("label") is not None:
        data["label"] = cv2.resize(data["label"], (width, height), interpolation=cv2.INTER_NEAREST)
    return data


class Resize:
    """Resize to ``target_size`` ``[w, h]`` (the serving size of an exported model)."""

    def __init__(self, target_size=(512, 512)) -> None:
        self.size = _size_pair(
            list(target_size) if isinstance(target_size, tuple) else target_size, "Resize.target_size"
        )

    def __call__(self, data: dict) -> dict:
        return _resize(data, *self.size)


class ResizeStepScaling:
    """Scale by a factor drawn from ``min..max`` in steps of ``scale_step_size`` (0: any factor)."""

    def __init__(self, min_scale_factor: float = 0.75, max_scale_factor: float = 1.25, scale_step_size: float = 0.25):
        if not 0 < min_scale_factor <= max_scale_factor or scale_step_size < 0:
            raise ConfigError(
                f"ResizeStepScaling needs 0 < min_scale_factor <= max_scale_factor and scale_step_size >= 0, got "
                f"{min_scale_factor}, {max_scale_factor}, {scale_step_size}"
            )
        self.low, self.high, self.step = float(min_scale_factor), float(max_scale_factor), float(scale_step_size)

    def factor(self) -> float:
        if self.low == self.high:
            return self.low
        if self.step == 0:
            return float(generator().uniform(self.low, self.high))
        steps = int((self.high - self.low) / self.step + 1)
        return float(generator().choice(np.linspace(self.low, self.high, steps)))

    def __call__(self, data: dict) -> dict:
        scale = self.factor()
        height, width = data["img"].shape[:2]
        return _resize(data, max(1, round(width * scale)), max(1, round(height * scale)))


class RandomPaddingCrop:
    """Pad right/bottom up to ``crop_size`` (image with ``im_padding_value``, label with
    ``label_padding_value``), then cut a random ``crop_size`` window."""

    def __init__(self, crop_size=(512, 512), im_padding_value: float = 127.5, label_padding_value: int = 255) -> None:
        self.size = _size_pair(crop_size, "RandomPaddingCrop.crop_size")
        self.im_pad, self.label_pad = float(im_padding_value), int(label_padding_value)

    def __call__(self, data: dict) -> dict:
        crop_w, crop_h = self.size
        img = data["img"]
        height, width = img.shape[:2]
        pad_h, pad_w = max(crop_h - height, 0), max(crop_w - width, 0)
        label = data.get("label")
        if pad_h or pad_w:
            img = cv2.copyMakeBorder(img, 0, pad_h, 0, pad_w, cv2.BORDER_CONSTANT, value=(self.im_pad,) * 3)
            if label is not None:
                label = cv2.copyMakeBorder(label, 0, pad_h, 0, pad_w, cv2.BORDER_CONSTANT, value=self.label_pad)
            height, width = img.shape[:2]
        top = int(generator().integers(0, height - crop_h + 1))
        left = int(generator().integers(0, width - crop_w + 1))
        data["img"] = img[top : top + crop_h, left : left + crop_w]
        if label is not None:
            data["label"] = label[top : top + crop_h, left : left + crop_w]
        return data


class RandomHorizontalFlip:
    """Mirror image and label left-right with probability ``prob``."""

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = float(prob)

    def __call__(self, data: dict) -> dict:
        if generator().random() < self.prob:
            data["img"] = data["img"][:, ::-1]
            if data.get("label") is not None:
                data["label"] = data["label"][:, ::-1]
        return data


class RandomDistort:
    """Photometric jitter (the image only), each in a random order with its own probability:
    brightness/contrast/saturation/sharpness factors in ``1 +- range``, hue shifted by up to
    ``hue_range`` degrees."""

    def __init__(self, brightness_range: float = 0.5, brightness_prob: float = 0.5, contrast_range: float = 0.5,
                 contrast_prob: float = 0.5, saturation_range: float = 0.5, saturation_prob: float = 0.5,
                 hue_range: float = 18, hue_prob: float = 0.5, sharpness_range: float = 0.5,
                 sharpness_prob: float = 0.0) -> None:  # fmt: skip
        self.enhance = [
            (ImageEnhance.Brightness, float(brightness_range), float(brightness_prob)),
            (ImageEnhance.Contrast, float(contrast_range), float(contrast_prob)),
            (ImageEnhance.Color, float(saturation_range), float(saturation_prob)),
            (ImageEnhance.Sharpness, float(sharpness_range), float(sharpness_prob)),
            (None, float(hue_range), float(hue_prob)),
        ]

    @staticmethod
    def _hue(image: Image.Image, degrees: float) -> Image.Image:
        hsv = np.array(image.convert("HSV"))
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + round(degrees * 255 / 360)) % 256
        return Image.fromarray(hsv, "HSV").convert("RGB")

    def __call__(self, data: dict) -> dict:
        rng = generator()
        image = Image.fromarray(np.ascontiguousarray(data["img"]).astype(np.uint8))
        for index in rng.permutation(len(self.enhance)):
            enhancer, spread, prob = self.enhance[index]
            if rng.random() >= prob:
                continue
            if enhancer is None:
                image = self._hue(image, rng.uniform(-spread, spread))
            else:
                image = enhancer(image).enhance(rng.uniform(1 - spread, 1 + spread))
        data["img"] = np.asarray(image)
        return data


class Normalize:
    """``(img / 255 - mean) / std`` per channel, as float32."""

    def __init__(self, mean: Sequence[float] = (0.5, 0.5, 0.5), std: Sequence[float] = (0.5, 0.5, 0.5)) -> None:
        mean, std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if mean.shape != (3,) or std.shape != (3,) or not np.all(std > 0):
            raise ConfigError(f"Normalize needs three means and three positive stds, got {mean} and {std}")
        self.mean, self.std = mean, std

    def __call__(self, data: dict) -> dict:
        # as [H, W * 3] rows: NumPy broadcasts over a 3-long last axis pixel by pixel, 5x slower (same bits)
        height, width, channels = np.shape(data["img"])
        rows = np.asarray(data["img"], np.float32).reshape(height, width * channels) / 255.0
        rows -= np.tile(self.mean, width)
        rows /= np.tile(self.std, width)
        data["img"] = rows.reshape(height, width, channels)
        return data


TRANSFORMS = {
    cls.__name__: cls
    for cls in (Resize, ResizeStepScaling, RandomPaddingCrop, RandomHorizontalFlip, RandomDistort, Normalize)
}
RANDOM = ("ResizeStepScaling", "RandomPaddingCrop", "RandomHorizontalFlip", "RandomDistort")
"""Training-only transforms: serving and evaluation must be deterministic."""
