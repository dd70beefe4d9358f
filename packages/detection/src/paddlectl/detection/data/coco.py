"""PaddleDetection's ``COCODataSet``: a COCO JSON file read with pycocotools, checked record by record.

A box reaching outside its image, a ``category_id`` not among ``categories`` or an image file that
is missing stops loading with a DataError naming the file and the annotation or image; a box of
zero width or height (after clipping to the image) cannot be learnt and is dropped, and the number
dropped is reported (a warning, and ``dropped``), never left to make a NaN loss.
"""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

from .dataset import DetDataset

TOLERANCE = 1.0  # pixels a box may pass the image edge by (rounding in tools that write COCO)


def load_coco(path: Path):
    """pycocotools' ``COCO`` of ``path``, its ``loading annotations`` chatter kept off stdout."""
    from pycocotools.coco import COCO

    if not path.is_file():
        raise DataError(f"annotation file {str(path)!r} does not exist; check anno_path and dataset_dir")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return COCO(str(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a COCO JSON file ({exc})") from None
    except (KeyError, TypeError, AssertionError) as exc:
        raise DataError(
            f"{path}: not a COCO annotation file (needs images, annotations, categories; {exc!r})"
        ) from None


class COCODataSet(DetDataset):
    """``dataset_dir/anno_path`` (COCO JSON) with images under ``dataset_dir/image_dir``."""

    def __init__(
        self, dataset_dir: str = "", image_dir: str = "", anno_path: str = "", transforms=(), allow_empty: bool = True
    ):
        anno = Path(dataset_dir) / anno_path
        coco = load_coco(anno)
        categories = sorted(coco.cats)
        if not categories:
            raise DataError(f"{anno}: 'categories' is empty; list the object categories")
        class_of = {cat: i for i, cat in enumerate(categories)}
        records, dropped = [], 0
        for image_id in sorted(coco.imgs):
            info = coco.imgs[image_id]
            file = Path(dataset_dir) / image_dir / str(info.get("file_name", ""))
            if not file.is_file():
                raise DataError(f"{anno}: image id {image_id}: file {str(file)!r} does not exist; check image_dir")
            height, width = float(info.get("height", 0)), float(info.get("width", 0))
            if height <= 0 or width <= 0:
                raise DataError(f"{anno}: image id {image_id} has no positive height/width")
            boxes, classes, crowd = [], [], []
            for ann in coco.imgToAnns.get(image_id, []):
                where = f"{anno}: annotation id {ann.get('id')} (image id {image_id})"
                if ann.get("category_id") not in class_of:
                    raise DataError(
                        f"{where}: category_id {ann.get('category_id')!r} is not in categories {categories}"
                    )
                try:
                    x, y, w, h = (float(v) for v in ann["bbox"])
                except (KeyError, TypeError, ValueError):
                    raise DataError(f"{where}: bbox must be [x, y, width, height], got {ann.get('bbox')!r}") from None
                if (
                    not np.isfinite([x, y, w, h]).all()
                    or x < -TOLERANCE
                    or y < -TOLERANCE
                    or x + w > width + TOLERANCE
                    or y + h > height + TOLERANCE
                ):
                    raise DataError(f"{where}: bbox {[x, y, w, h]} lies outside the {width:g}x{height:g} image")
                x1, y1 = max(x, 0.0), max(y, 0.0)
                x2, y2 = min(x + w, width), min(y + h, height)
                if x2 - x1 <= 0 or y2 - y1 <= 0:
                    dropped += 1
                    continue
                boxes.append([x1, y1, x2, y2])
                classes.append(class_of[ann["category_id"]])
                crowd.append(int(ann.get("iscrowd", 0)))
            if not boxes and not allow_empty:
                continue
            records.append(
                {
                    "im_file": str(file),
                    "im_id": int(image_id),
                    "h": height,
                    "w": width,
                    "gt_bbox": np.asarray(boxes, np.float32).reshape(-1, 4),
                    "gt_class": np.asarray(classes, np.int32).reshape(-1, 1),
                    "is_crowd": np.asarray(crowd, np.int32).reshape(-1, 1),
                    "source": f"{anno}: image id {image_id}",
                }
            )
        if dropped:
            warnings.warn(f"{anno}: dropped {dropped} degenerate boxes (zero width or height)", stacklevel=2)
        names = [str(coco.cats[c].get("name", c)) for c in categories]
        super().__init__(records, names, transforms, dropped, str(anno))
