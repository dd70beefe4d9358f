"""Generated detection scenes: real-looking objects on textured backgrounds, with exact labels.

Tests and the README example need a detection set that is free, offline and as large as asked.
Objects are scikit-learn's handwritten digits (real pen strokes), letters rendered from Pillow's
built-in scalable font, and filled shapes, each at a random scale and colour; later objects may
partly cover earlier ones (occlusion), so labels come from each object's *visible* pixels. The
annotations are a COCO JSON file (``bbox`` [x, y, w, h] of the visible mask, ``segmentation`` as
RLE, ``area``), the format every reader of the suite (and pycocotools) takes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from pycocotools import mask as mask_utils

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.utils.fileio import atomic_write

CATEGORIES = ("digit", "letter", "circle", "square", "triangle")
ANNOTATIONS = "annotations.json"
IMAGES = "images"
MAX_HIDDEN = 0.5  # an object is placed only if it leaves at least half of each earlier one visible
MIN_VISIBLE_PIXELS = 24
LETTERS = "ABEFHKMNRTWXYZ"
SOURCES = [  # what the pixels come from, recorded in the COCO file's info for the data's lineage
    "digits: scikit-learn load_digits (UCI optdigits, CC BY 4.0)",
    "letters: Pillow ImageFont.load_default (Aileron Regular, CC0-1.0)",
    "shapes and backgrounds: drawn by paddlectl (OpenCV, NumPy)",
]


@cache
def _digits() -> np.ndarray:
    """The 1797 8x8 digits as float images in [0, 1] (loaded once per process)."""
    from sklearn.datasets import load_digits

    return load_digits().images / 16.0


def _digit(rng: np.random.Generator, size: int) -> np.ndarray:
    images = _digits()
    small = images[rng.integers(len(images))]
    return cv2.resize(small.astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def _letter(rng: np.random.Generator, size: int) -> np.ndarray:
    font = ImageFont.load_default(size=size)
    char = LETTERS[rng.integers(len(LETTERS))]
    left, top, right, bottom = font.getbbox(char)
    canvas = Image.new("L", (right - left + 2, bottom - top + 2))
    ImageDraw.Draw(canvas).text((1 - left, 1 - top), char, fill=255, font=font)
    glyph = np.asarray(canvas, np.float32) / 255.0
    scale = size / max(glyph.shape)
    shape = (max(2, round(glyph.shape[1] * scale)), max(2, round(glyph.shape[0] * scale)))
    return cv2.resize(glyph, shape, interpolation=cv2.INTER_AREA)


def _shape(kind: str, rng: np.random.Generator, size: int) -> np.ndarray:
    canvas = np.zeros((size, size), np.uint8)
    centre, radius = (size - 1) / 2.0, (size - 1) / 2.0
    if kind == "circle":
        cv2.circle(canvas, (size // 2, size // 2), size // 2, 255, -1, cv2.LINE_AA)
        return canvas / 255.0
    sides = 4 if kind == "square" else 3
    angle = rng.uniform(0, 2 * np.pi)
    turns = angle + np.arange(sides) * 2 * np.pi / sides
    points = np.stack([centre + radius * np.cos(turns), centre + radius * np.sin(turns)], 1)
    cv2.fillPoly(canvas, [np.round(points.clip(0, size - 1) * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return canvas / 255.0


def _object(category: str, rng: np.random.Generator, size: int) -> np.ndarray:
    """An alpha map in [0, 1] of one object about ``size`` pixels across."""
    if category == "digit":
        return _digit(rng, size)
    if category == "letter":
        return _letter(rng, size)
    return _shape(category, rng, size)


def _background(rng: np.random.Generator, height: int, width: int) -> np.ndarray:
    """Smooth colour noise plus a faint grating: textured, never one flat colour."""
    grid = rng.uniform(0, 255, (int(rng.integers(3, 9)), int(rng.integers(3, 9)), 3)).astype(np.float32)
    base = cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)
    fine = cv2.resize(rng.normal(0, 18, (height // 4, width // 4, 3)).astype(np.float32), (width, height))
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    theta, period = rng.uniform(0, np.pi), rng.uniform(6, 30)
    stripes = 20 * np.sin((xx * np.cos(theta) + yy * np.sin(theta)) * 2 * np.pi / period)
    return (0.6 * base + 50 + fine + stripes[..., None]).clip(0, 255)


def _colour(rng: np.random.Generator, under: np.ndarray) -> np.ndarray:
    """A colour whose brightness differs clearly from the background under the object."""
    mean = float(under.mean())
    for _ in range(16):
        colour = rng.uniform(0, 255, 3)
        if abs(colour.mean() - mean) > 70:
            return colour
    return np.full(3, 0.0 if mean > 127 else 255.0)


def _place(visible: list[np.ndarray], alpha: np.ndarray, y: int, x: int, shape: tuple[int, int]) -> np.ndarray | None:
    """The new object's full-image mask, or None when it would hide too much of an earlier one."""
    mask = np.zeros(shape, bool)
    mask[y : y + alpha.shape[0], x : x + alpha.shape[1]] = alpha > 0.5
    for other in visible:
        covered = np.count_nonzero(other & mask)
        if covered and np.count_nonzero(other & ~mask) < (1 - MAX_HIDDEN) * np.count_nonzero(other):
            return None
    return mask


def render_scene(rng: np.random.Generator, image_size: tuple[int, int], max_objects: int, min_size: int, max_size: int):
    """``(image HxWx3 uint8, [(category index, visible mask)])`` of one scene."""
    height, width = image_size
    image = _background(rng, height, width)
    placed: list[tuple[int, np.ndarray]] = []
    for _ in range(int(rng.integers(1, max_objects + 1))):
        for _attempt in range(8):
            category = int(rng.integers(len(CATEGORIES)))
            size = int(np.exp(rng.uniform(np.log(min_size), np.log(max_size))))
            alpha = _object(CATEGORIES[category], rng, size)
            h, w = alpha.shape
            if h >= height or w >= width:
                continue
            y, x = int(rng.integers(0, height - h)), int(rng.integers(0, width - w))
            mask = _place([m for _, m in placed], alpha, y, x, (height, width))
            if mask is None:
                continue
            region = image[y : y + h, x : x + w]
            region[:] = region * (1 - alpha[..., None]) + _colour(rng, region) * alpha[..., None]
            placed = [(c, m & ~mask) for c, m in placed] + [(category, mask)]
            break
    objects = [(c, m) for c, m in placed if np.count_nonzero(m) >= MIN_VISIBLE_PIXELS]
    return np.round(image).astype(np.uint8), objects


def _annotation(mask: np.ndarray, category: int, image_id: int, ann_id: int) -> dict:
    rle = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    x, y, w, h = (float(v) for v in mask_utils.toBbox(rle))
    return {
        "id": ann_id,
        "image_id": image_id,
        "category_id": category + 1,
        "bbox": [x, y, w, h],
        "area": float(mask_utils.area(rle)),
        "iscrowd": 0,
        "segmentation": {"size": [int(s) for s in rle["size"]], "counts": rle["counts"].decode("ascii")},
    }


def _check(n, image_size, max_objects: int, min_size: int, max_size: int) -> tuple[int, int]:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"generate_scenes: n must be a positive number of images, got {n!r}")
    try:
        height, width = (int(s) for s in image_size)
    except (TypeError, ValueError):
        raise ConfigError(f"generate_scenes: image_size must be (height, width), got {image_size!r}") from None
    if min(height, width) < 32:
        raise ConfigError(f"generate_scenes: image_size {image_size!r} is too small; use at least (32, 32)")
    if not 1 <= max_objects <= 64:
        raise ConfigError(f"generate_scenes: max_objects must be in 1..64, got {max_objects!r}")
    if not 8 <= min_size <= max_size < min(height, width):
        raise ConfigError(
            f"generate_scenes: object sizes must satisfy 8 <= min_size <= max_size < the image side, "
            f"got min_size={min_size}, max_size={max_size} for {height}x{width} images"
        )
    return height, width


def generate_scenes(
    out_dir,
    n: int,
    seed: int = 0,
    image_size: tuple[int, int] = (320, 320),
    max_objects: int = 6,
    min_size: int = 16,
    max_size: int | None = None,
) -> Path:
    """Write ``n`` scenes as ``out_dir/images/*.png`` and ``out_dir/annotations.json`` (COCO, category
    ids from 1, RLE masks); return the JSON's path. Scene ``i`` depends only on ``(seed, i)``, so two
    seeds give disjoint training and held-out sets and a regenerated set is identical."""
    max_size = max_size if max_size is not None else int(min(image_size) * 0.35)
    height, width = _check(n, image_size, max_objects, min_size, max_size)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"--out {str(out)!r} is a file; give a directory for the images and annotations")
    (out / IMAGES).mkdir(parents=True, exist_ok=True)
    images, annotations = [], []
    for index in range(n):
        rng = np.random.default_rng([seed, index])
        image, objects = render_scene(rng, (height, width), max_objects, min_size, max_size)
        name = f"{IMAGES}/scene_{index:06d}.png"
        if not cv2.imwrite(str(out / name), image[:, :, ::-1]):
            raise DataError(f"cannot write {str(out / name)!r}; check the directory is writable")
        images.append({"id": index + 1, "file_name": name, "height": height, "width": width})
        for category, mask in objects:
            annotations.append(_annotation(mask, category, index + 1, len(annotations) + 1))
    coco = {
        "info": {"description": f"paddlectl generated scenes (seed {seed})", "sources": SOURCES},
        "images": images,
        "annotations": annotations,
        "categories": [{"id": i + 1, "name": c, "supercategory": "object"} for i, c in enumerate(CATEGORIES)],
    }
    path = out / ANNOTATIONS
    with atomic_write(path, "w", encoding="utf-8") as fh:
        json.dump(coco, fh)
    path.chmod(0o644)  # the temporary file was private; a data set is for reading
    return path


__all__ = ["ANNOTATIONS", "CATEGORIES", "generate_scenes", "render_scene"]
