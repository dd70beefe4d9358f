"""Semantic-segmentation sets from the detection suite's generated scenes.

The scenes carry exact visible-pixel masks per object (COCO RLE), so the semantic label of a
pixel is the category of the object that shows there, or background. Written in PaddleSeg's
layout: ``images/``, ``labels/`` (palette PNGs of class ids), ``file_list.txt`` of ``image label``
lines and ``labels.txt`` (class names, background first), ready for ``Train.dataset``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pycocotools import mask as mask_utils

from paddlectl.detection.synth import generate_scenes
from paddlectl.framework.errors import DataError
from paddlectl.framework.utils.fileio import atomic_write

from .vis import save_pseudo_color

FILE_LIST = "file_list.txt"
LABEL_NAMES = "labels.txt"
LABELS = "labels"


def semantic_masks(coco: dict) -> dict[int, np.ndarray]:
    """Image id -> ``[H, W]`` uint8 class ids (category id, 0 for background)."""
    masks = {image["id"]: np.zeros((image["height"], image["width"]), np.uint8) for image in coco["images"]}
    for ann in coco["annotations"]:
        if ann["image_id"] not in masks:
            raise DataError(f"annotation {ann['id']} names image {ann['image_id']}, which the file does not list")
        pixels = mask_utils.decode(ann["segmentation"]).astype(bool)
        masks[ann["image_id"]][pixels] = ann["category_id"]
    return masks


def generate_seg_set(out_dir, n: int, seed: int = 0, image_size: tuple[int, int] = (320, 320), **scene_args) -> Path:
    """Write ``n`` scenes with semantic labels under ``out_dir``; return the file list's path."""
    out = Path(out_dir)
    annotations = generate_scenes(out, n, seed=seed, image_size=image_size, **scene_args)
    coco = json.loads(annotations.read_text(encoding="utf-8"))
    (out / LABELS).mkdir(exist_ok=True)
    lines = []
    masks = semantic_masks(coco)
    for image in coco["images"]:
        label = f"{LABELS}/{Path(image['file_name']).stem}.png"
        save_pseudo_color(masks[image["id"]], out / label)
        lines.append(f"{image['file_name']} {label}\n")
    names = ["background", *(c["name"] for c in sorted(coco["categories"], key=lambda c: c["id"]))]
    with atomic_write(out / LABEL_NAMES, "w", encoding="utf-8") as fh:
        fh.write("".join(f"{name}\n" for name in names))
    path = out / FILE_LIST
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines))
    return path
