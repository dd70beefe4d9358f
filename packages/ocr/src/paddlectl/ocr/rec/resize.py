"""Text-line images to the recogniser's (and direction classifier's) input, as PaddleOCR's
``RecResizeImg`` / ``ClsResizeImg`` do: keep the aspect ratio at the model's height, cap the width,
scale to [-1, 1] ((x / 255 - 0.5) / 0.5) and pad the right with zeros. The same function serves
training, evaluation and ``predict``, so what a model sees at serving time is what it trained on."""

from __future__ import annotations

import math

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError, DataError

MEAN = (0.5, 0.5, 0.5)
STD = (0.5, 0.5, 0.5)
"""The normalisation after scaling to [0, 1]; exported with the model for other servers to apply."""


def check_image_shape(image_shape, where: str) -> list[int]:
    if not (
        isinstance(image_shape, list | tuple)
        and len(image_shape) == 3
        and all(isinstance(d, int) and d > 0 for d in image_shape)
        and image_shape[0] == 3
    ):
        raise ConfigError(f"{where}.image_shape must be [3, height, width] (BGR/RGB lines), got {image_shape!r}")
    return list(image_shape)


def resize_norm_img(image: np.ndarray, image_shape: list[int], padding: bool = True) -> np.ndarray:
    """HxWx3 uint8 -> float32 [3, H, W]: resized to height H keeping the aspect ratio (width at most
    W, the rest zero), or stretched to HxW when ``padding`` is False."""
    channels, height, width = image_shape
    h, w = image.shape[:2]
    if h == 0 or w == 0:
        raise DataError(f"a text-line image of size {w}x{h} cannot be recognised; it has no pixels")
    resized_w = width if not padding else min(width, int(math.ceil(height * w / h)))
    resized = cv2.resize(image, (resized_w, height), interpolation=cv2.INTER_LINEAR).astype("float32")
    resized = (resized.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5
    out = np.zeros((channels, height, width), dtype="float32")
    out[:, :, :resized_w] = resized
    return out


class RecResizeImg:
    """``data['image']`` (HWC uint8) -> the recogniser's float32 [3, H, W] input."""

    def __init__(self, image_shape=(3, 48, 320), padding: bool = True) -> None:
        self.image_shape = check_image_shape(image_shape, type(self).__name__)
        self.padding = bool(padding)

    def __call__(self, data: dict) -> dict:
        data["image"] = resize_norm_img(data["image"], self.image_shape, self.padding)
        return data


class ClsResizeImg(RecResizeImg):
    """The direction classifier's input: the same resize at its own shape (PaddleOCR: [3, 48, 192])."""

    def __init__(self, image_shape=(3, 48, 192)) -> None:
        super().__init__(image_shape, padding=True)
