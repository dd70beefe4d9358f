"""``IaaAugment``: PaddleOCR's geometric training augmentation for detection, without imgaug.

PaddleOCR builds an imgaug ``Sequential`` from ``augmenter_args`` (default: ``Fliplr`` p 0.5,
``Affine`` rotate in [-10, 10] degrees, ``Resize`` by a factor in [0.5, 3]) and moves the
polygons with the image. The same three augmenters are written here with OpenCV: each is one
2x3 affine matrix applied to the image (bilinear, zero fill, size kept except by ``Resize``)
and to the polygon points. Draws come from the framework's generator (``Global.seed``).
"""

from __future__ import annotations

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError
from paddlectl.framework.ops.random import generator

DEFAULT_ARGS = [
    {"type": "Fliplr", "args": {"p": 0.5}},
    {"type": "Affine", "args": {"rotate": [-10, 10]}},
    {"type": "Resize", "args": {"size": [0.5, 3]}},
]


def _range(value, where: str) -> tuple[float, float]:
    """imgaug's number-or-[low, high] parameter as a range."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), float(value)
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return float(min(value)), float(max(value))
    raise ConfigError(f"IaaAugment {where} must be a number or [low, high], got {value!r}")


def _fliplr(p: float = 0.5):
    if not 0 <= p <= 1:
        raise ConfigError(f"IaaAugment Fliplr.p must be in [0, 1], got {p!r}")

    def matrix(rng, h: int, w: int):
        flip = rng.random() < p
        return (np.array([[-1.0, 0, w - 1], [0, 1, 0]]) if flip else np.array([[1.0, 0, 0], [0, 1, 0]])), (h, w)

    return matrix


def _affine(rotate=0.0):
    low, high = _range(rotate, "Affine.rotate")

    def matrix(rng, h: int, w: int):
        angle = rng.uniform(low, high)
        return cv2.getRotationMatrix2D((w / 2.0, h / 2.0), -angle, 1.0), (h, w)

    return matrix


def _resize(size=1.0):
    low, high = _range(size, "Resize.size")
    if low <= 0:
        raise ConfigError(f"IaaAugment Resize.size must be positive, got {size!r}")

    def matrix(rng, h: int, w: int):
        factor = rng.uniform(low, high)
        nh, nw = max(1, round(h * factor)), max(1, round(w * factor))
        return np.array([[nw / w, 0, 0], [0, nh / h, 0]]), (nh, nw)

    return matrix


AUGMENTERS = {"Fliplr": _fliplr, "Affine": _affine, "Resize": _resize}


class IaaAugment:
    def __init__(self, augmenter_args: list | None = None) -> None:
        steps = DEFAULT_ARGS if augmenter_args is None else augmenter_args
        if not isinstance(steps, list):
            raise ConfigError("IaaAugment.augmenter_args must be a list of {type: Fliplr|Affine|Resize, args: {...}}")
        self.augmenters = []
        for i, step in enumerate(steps):
            kind = step.get("type") if isinstance(step, dict) else None
            if kind not in AUGMENTERS:
                raise ConfigError(
                    f"IaaAugment.augmenter_args[{i}].type is {kind!r}; choose from {', '.join(AUGMENTERS)}"
                )
            args = step.get("args") or {}
            try:
                self.augmenters.append(AUGMENTERS[kind](**args))
            except TypeError as exc:
                raise ConfigError(f"IaaAugment.augmenter_args[{i}] ({kind}): {exc}") from None

    def __call__(self, data: dict) -> dict:
        image, polys, rng = data["image"], np.asarray(data["polys"], np.float64), generator()
        for augmenter in self.augmenters:
            m, (h, w) = augmenter(rng, *image.shape[:2])
            image = cv2.warpAffine(image, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=0)
            polys = polys @ m[:, :2].T + m[:, 2]
        data["image"], data["polys"] = image, polys.astype(np.float32)
        return data
