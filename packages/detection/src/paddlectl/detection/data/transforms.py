"""PaddleDetection's reader transforms (sample transforms), with the boxes carried through.

Each takes and returns the sample dict (``image`` HWC until ``Permute``; ``gt_bbox`` x1y1x2y2 in
the current image's pixels; ``im_shape`` and ``scale_factor`` as PaddleDetection keeps them, so
predictions map back to the source image). ``PadGT`` ends every pipeline: it packs the labels into
one table (``labels.pack``) and returns ``(image, label)``. Random transforms draw from NumPy's
global generator, which the trainer seeds.

A batch transform (``BatchTransform``: ``BatchRandomResize``) makes one random choice for a whole
batch, so the batch's images still stack: ``draw()`` makes the choice as a per-sample transform,
and the dataset applies it to every sample of the batch (see ``dataset.DetDataset``).
"""

from __future__ import annotations

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.vision.image_io import read_image

from .labels import pack

INTERP = {0: cv2.INTER_NEAREST, 1: cv2.INTER_LINEAR, 2: cv2.INTER_CUBIC, 3: cv2.INTER_AREA, 4: cv2.INTER_LANCZOS4}


def _rows(image: np.ndarray) -> np.ndarray:
    """An HWC image as [H, W * C] float32 rows (a copy). NumPy loops over a short last axis once per
    pixel, so per-pixel and per-channel arithmetic on HWC arrays is 5-10x slower than on rows; the
    results are the same bits."""
    height, width, channels = image.shape
    return image.reshape(height, width * channels).astype(np.float32)


def _keep(data: dict, keep: np.ndarray) -> None:
    for key in ("gt_bbox", "gt_class", "is_crowd"):
        if key in data:
            data[key] = data[key][keep]


class Decode:
    """The image file (or an array given as ``image``) as RGB HWC uint8; sets ``im_shape``/``scale_factor``."""

    def __call__(self, data: dict) -> dict:
        if data.get("image") is None:
            data["image"] = read_image(data["im_file"], "RGB")
        image = data["image"]
        if image.ndim != 3 or image.shape[2] != 3:
            raise DataError(f"{data.get('source', 'input')}: expected an RGB image, got shape {list(image.shape)}")
        height, width = image.shape[:2]
        if "h" in data and (round(data["h"]), round(data["w"])) != (height, width):
            raise DataError(
                f"{data['source']}: the annotations say {data['w']:g}x{data['h']:g}, the image "
                f"{data['im_file']!r} is {width}x{height}"
            )
        data["im_shape"] = np.array([height, width], np.float32)
        data["scale_factor"] = np.array([1.0, 1.0], np.float32)
        return data


class RandomFlip:
    """Mirror left-right with probability ``prob``."""

    def __init__(self, prob: float = 0.5) -> None:
        self.prob = float(prob)

    def __call__(self, data: dict) -> dict:
        if np.random.random() < self.prob:
            width = data["image"].shape[1]
            data["image"] = np.ascontiguousarray(data["image"][:, ::-1])
            if len(data["gt_bbox"]):
                boxes = data["gt_bbox"].copy()
                boxes[:, [0, 2]] = width - data["gt_bbox"][:, [2, 0]]
                data["gt_bbox"] = boxes
        return data


class RandomDistort:
    """Brightness, contrast, saturation (and hue) jitter, each with probability ``prob``."""

    def __init__(
        self, hue=(-18, 18), saturation=(0.5, 1.5), contrast=(0.5, 1.5), brightness=(0.5, 1.5), prob: float = 0.5
    ):
        self.hue, self.saturation, self.contrast, self.brightness = hue, saturation, contrast, brightness
        self.prob = float(prob)

    def __call__(self, data: dict) -> dict:
        shape = data["image"].shape
        image = _rows(data["image"])
        if np.random.random() < self.prob:
            image *= np.random.uniform(*self.brightness)
        if np.random.random() < self.prob:
            mean = image.mean()
            image -= mean
            image *= np.random.uniform(*self.contrast)
            image += mean
        if np.random.random() < self.prob:
            pixels = image.reshape(shape)
            grey = np.repeat((pixels[..., 0] + pixels[..., 1] + pixels[..., 2]) / 3, 3, axis=1)
            image -= grey
            image *= np.random.uniform(*self.saturation)
            image += grey
        image = image.clip(0, 255).astype(np.uint8).reshape(shape)
        if np.random.random() < self.prob:
            hsv = cv2.cvtColor(image, cv2.COLOR_RGB2HSV)
            hsv[..., 0] = (hsv[..., 0].astype(np.int32) + int(np.random.uniform(*self.hue) / 2)) % 180
            image = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
        data["image"] = image
        return data


class RandomCrop:
    """SSD-style crop: a region of ``scaling`` x the image area and ``aspect_ratio``, accepted when
    some box overlaps it by an IoU in ``thresholds`` (or anyway, with ``num_attempts`` used up, the
    whole image is kept); boxes whose centre falls outside are dropped, the rest clipped."""

    def __init__(
        self,
        aspect_ratio=(0.5, 2.0),
        thresholds=(0.0, 0.1, 0.3, 0.5, 0.7, 0.9),
        scaling=(0.3, 1.0),
        num_attempts: int = 50,
    ):
        self.aspect_ratio, self.thresholds, self.scaling = aspect_ratio, list(thresholds), scaling
        self.num_attempts = int(num_attempts)

    def __call__(self, data: dict) -> dict:
        boxes = data["gt_bbox"]
        if not len(boxes):
            return data
        height, width = data["image"].shape[:2]
        threshold = self.thresholds[np.random.randint(len(self.thresholds))]
        for _ in range(self.num_attempts):
            scale = np.random.uniform(*self.scaling)
            ratio = np.random.uniform(max(self.aspect_ratio[0], scale**2), min(self.aspect_ratio[1], scale**-2))
            h, w = int(height * scale / np.sqrt(ratio)), int(width * scale * np.sqrt(ratio))
            if h < 8 or w < 8 or h > height or w > width:
                continue
            y, x = np.random.randint(0, height - h + 1), np.random.randint(0, width - w + 1)
            crop = np.array([x, y, x + w, y + h], np.float32)
            lt, rb = np.maximum(boxes[:, :2], crop[:2]), np.minimum(boxes[:, 2:], crop[2:])
            inter = np.prod(np.clip(rb - lt, 0, None), 1)
            iou = inter / (np.prod(boxes[:, 2:] - boxes[:, :2], 1) + w * h - inter)
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            inside = np.all((centres > crop[:2]) & (centres < crop[2:]), 1)
            if iou.max() < threshold or not inside.any():
                continue
            _keep(data, inside)
            kept = data["gt_bbox"]
            kept = (
                np.concatenate([np.maximum(kept[:, :2], crop[:2]), np.minimum(kept[:, 2:], crop[2:])], 1)
                - crop[[0, 1, 0, 1]]
            )
            data["gt_bbox"] = kept.astype(np.float32)
            data["image"] = data["image"][y : y + h, x : x + w]
            return data
        return data


class Resize:
    """To ``target_size`` [h, w]; with ``keep_ratio`` one scale for both axes (then ``Pad``), chosen as
    PaddleDetection's: the short side reaches the target's short side unless the long side would pass
    the target's long side, so [800, 1333] serves portrait and landscape images alike."""

    def __init__(self, target_size, keep_ratio: bool = True, interp: int = 2) -> None:
        size = [target_size, target_size] if isinstance(target_size, int) else list(target_size)
        if len(size) != 2 or min(size) < 1:
            raise ConfigError(f"Resize.target_size must be [height, width], got {target_size!r}")
        if interp not in INTERP:
            raise ConfigError(f"Resize.interp is {interp!r}; use 0-4 (cv2 nearest, linear, cubic, area, lanczos)")
        self.target_size, self.keep_ratio, self.interp = [int(s) for s in size], bool(keep_ratio), interp

    def scales(self, height: int, width: int) -> tuple[float, float]:
        """(y, x) scale factors for an image of ``height`` x ``width``."""
        if self.keep_ratio:
            short, long = min(self.target_size), max(self.target_size)
            scale = min(short / min(height, width), long / max(height, width))
            return scale, scale
        return self.target_size[0] / height, self.target_size[1] / width

    def __call__(self, data: dict) -> dict:
        height, width = data["image"].shape[:2]
        sy, sx = self.scales(height, width)
        # by factors, as PaddleDetection calls cv2 (the size rounds; the sampling grid is the factors')
        data["image"] = cv2.resize(data["image"], None, fx=sx, fy=sy, interpolation=INTERP[self.interp])
        resized_h, resized_w = sy * height, sx * width
        data["im_shape"] = np.array([resized_h, resized_w], np.float32)
        data["scale_factor"] = (data["scale_factor"] * np.array([sy, sx])).astype(np.float32)
        if len(data.get("gt_bbox", ())):
            box = data["gt_bbox"] * np.array([sx, sy, sx, sy], np.float32)
            box[:, 0::2] = np.clip(box[:, 0::2], 0, resized_w)
            box[:, 1::2] = np.clip(box[:, 1::2], 0, resized_h)
            data["gt_bbox"] = box.astype(np.float32)
        return data


class BatchTransform:
    """A transform whose random choice is made once per batch: ``draw()`` -> a per-sample transform."""

    def draw(self):
        raise NotImplementedError

    def __call__(self, samples: list[dict]) -> list[dict]:
        """PaddleDetection's form: the whole batch through one draw."""
        op = self.draw()
        return [op(sample) for sample in samples]


class BatchRandomResize(BatchTransform):
    """Multi-scale training: each batch is resized to one ``target_size`` entry drawn at random
    (``random_size``; else ``target_size`` is the one size), with one of the five interpolations
    drawn at random (``random_interp``; else ``interp``), boxes scaled with the images.

    As PaddleDetection's: ``keep_ratio`` as ``Resize`` takes it, ``interp`` a cv2 code (default
    nearest), an entry an int (square) or ``[h, w]``; the draws are ``np.random.choice``."""

    INTERPS = (cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_AREA, cv2.INTER_CUBIC, cv2.INTER_LANCZOS4)

    def __init__(
        self, target_size, keep_ratio: bool, interp: int = 0, random_size: bool = True, random_interp: bool = False
    ) -> None:
        if random_size and (not isinstance(target_size, list | tuple) or not target_size):
            raise ConfigError(
                f"BatchRandomResize.target_size is {target_size!r}; with random_size it must be a list of sizes "
                "to draw from, e.g. [160, 192, 224] or [[160, 192], [192, 224]]"
            )
        sizes = list(target_size) if random_size else [target_size]
        self.resizes = [Resize(size, keep_ratio, interp) for size in sizes]  # checks every size and interp
        self.random_size, self.random_interp = bool(random_size), bool(random_interp)

    def draw(self) -> Resize:
        resize = self.resizes[np.random.choice(len(self.resizes))] if self.random_size else self.resizes[0]
        if not self.random_interp:
            return resize
        return Resize(resize.target_size, resize.keep_ratio, int(np.random.choice(self.INTERPS)))


class NormalizeImage:
    """``(image / 255 - mean) / std`` with ``is_scale``, else ``(image - mean) / std``."""

    def __init__(self, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225), is_scale: bool = True) -> None:
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.shape != (3,) or self.std.shape != (3,) or (self.std <= 0).any():
            raise ConfigError("NormalizeImage.mean/std must be three numbers each, std positive")
        self.is_scale = bool(is_scale)

    def __call__(self, data: dict) -> dict:
        image = _rows(data["image"])
        width = data["image"].shape[1]
        if self.is_scale:
            image /= 255.0
        image -= np.tile(self.mean, width)
        image /= np.tile(self.std, width)
        data["image"] = image.reshape(data["image"].shape)
        return data


class Pad:
    """Zero-pad at the bottom/right to ``size`` [h, w] (boxes unchanged), so every image batches."""

    def __init__(self, size) -> None:
        self.size = [size, size] if isinstance(size, int) else [int(s) for s in size]

    def __call__(self, data: dict) -> dict:
        image = data["image"]
        height, width = image.shape[:2]
        if height > self.size[0] or width > self.size[1]:
            raise ConfigError(f"Pad.size {self.size} is smaller than a {height}x{width} image; pad to the Resize size")
        out = np.zeros((self.size[0], self.size[1], image.shape[2]), image.dtype)
        out[:height, :width] = image
        data["image"] = out
        data["im_shape"] = np.array(self.size, np.float32)
        return data


class Permute:
    """HWC -> CHW float32, the layout the network takes."""

    def __call__(self, data: dict) -> dict:
        data["image"] = np.ascontiguousarray(data["image"].transpose(2, 0, 1), np.float32)
        return data


class PadGT:
    """The last transform: ``(image, label table)`` with room for ``num_max_boxes`` objects."""

    def __init__(self, num_max_boxes: int = 100) -> None:
        if not isinstance(num_max_boxes, int) or num_max_boxes < 1:
            raise ConfigError(f"PadGT.num_max_boxes must be a positive count, got {num_max_boxes!r}")
        self.num_max_boxes = num_max_boxes

    def __call__(self, data: dict) -> tuple:
        return data["image"], pack(data, self.num_max_boxes)


TRANSFORMS = {
    cls.__name__: cls
    for cls in (
        Decode,
        RandomFlip,
        RandomDistort,
        RandomCrop,
        Resize,
        BatchRandomResize,
        NormalizeImage,
        Pad,
        Permute,
        PadGT,
    )
}
LABEL_OPS = ("RandomFlip", "RandomDistort", "RandomCrop", "PadGT")  # left out when serving
