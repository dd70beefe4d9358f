"""What ``predict`` writes beside its JSON: the label map (class ids, the file a program reads),
a palette PNG (the same ids with PaddleSeg's colours, the file a person looks at; PaddleSeg's own
datasets store labels this way) and an overlay of those colours on the image."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from paddlectl.framework.errors import DataError


def color_map(num_classes: int = 256) -> np.ndarray:
    """``[num_classes, 3]`` uint8: the PASCAL VOC colour map PaddleSeg uses (class 0 black, then
    colours whose bits spread each id's bits over R, G and B, so neighbouring ids differ)."""
    colours = np.zeros((num_classes, 3), np.uint8)
    for index in range(num_classes):
        value, bit = index, 7
        while value and bit >= 0:
            for channel in range(3):
                colours[index, channel] |= ((value >> channel) & 1) << bit
            value >>= 3
            bit -= 1
    return colours


def save_label_map(labels: np.ndarray, path: Path) -> None:
    """Class ids as a greyscale PNG (ids up to 255)."""
    labels = np.asarray(labels)
    if labels.ndim != 2 or labels.min(initial=0) < 0 or labels.max(initial=0) > 255:
        raise DataError(f"a label map is HxW class ids in 0..255, got shape {labels.shape}")
    Image.fromarray(labels.astype(np.uint8), "L").save(path)


def save_pseudo_color(labels: np.ndarray, path: Path) -> None:
    """Class ids as a palette PNG: the indices are kept, so it is also a valid label file."""
    image = Image.fromarray(np.asarray(labels, np.uint8), "P")
    image.putpalette(color_map().ravel().tolist())
    image.save(path)


def overlay(image: np.ndarray, labels: np.ndarray, weight: float = 0.6) -> np.ndarray:
    """``weight`` of the image plus ``1 - weight`` of the class colours (HxWx3 RGB uint8)."""
    colours = color_map()[np.asarray(labels, np.uint8)]
    return cv2.addWeighted(np.asarray(image, np.uint8), weight, colours, 1 - weight, 0)


def resize_labels(labels: np.ndarray, height: int, width: int) -> np.ndarray:
    """A label map at another size (nearest neighbour: no class is invented at borders)."""
    return cv2.resize(np.asarray(labels, np.uint8), (width, height), interpolation=cv2.INTER_NEAREST)


def write_visuals(image: np.ndarray, pred, out_dir: Path, stem: str, weight: float = 0.6) -> dict[str, str]:
    """``<stem>_label.png``, ``<stem>_pseudo.png`` and ``<stem>_overlay.png`` under ``out_dir``, with
    the label map ``pred`` (at the model's size) scaled to ``image``'s size; returns their paths."""
    labels = resize_labels(pred, *image.shape[:2])
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {kind: str(out_dir / f"{stem}_{suffix}.png") for kind, suffix in
             (("label_map", "label"), ("pseudo_color", "pseudo"), ("overlay", "overlay"))}  # fmt: skip
    save_label_map(labels, Path(files["label_map"]))
    save_pseudo_color(labels, Path(files["pseudo_color"]))
    Image.fromarray(overlay(image, labels, weight)).save(files["overlay"])
    return files
