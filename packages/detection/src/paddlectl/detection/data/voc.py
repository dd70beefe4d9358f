"""PaddleDetection's ``VOCDataSet``: a list file of ``image annotation.xml`` lines and Pascal VOC XML.

``label_list`` names the classes, one per line (their order is the class index). The same checks
as the COCO reader: an unknown class name, a box outside the image or a missing file is a
DataError naming the file; boxes of zero size are dropped and counted.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

from .coco import TOLERANCE
from .dataset import DetDataset


def _number(node, tag: str, where: str) -> float:
    try:
        return float(node.find(tag).text)
    except (AttributeError, TypeError, ValueError):
        raise DataError(f"{where}: <{tag}> is missing or not a number") from None


def parse_voc_xml(path: Path, class_of: dict[str, int]):
    """``(height, width, boxes [n, 4], classes [n], difficult [n], dropped)`` of one VOC XML file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DataError(f"{path}: cannot read Pascal VOC XML ({exc})") from None
    size = root.find("size")
    if size is None:
        raise DataError(f"{path}: no <size> element; VOC annotations give the image's width and height")
    height, width = _number(size, "height", str(path)), _number(size, "width", str(path))
    boxes, classes, difficult, dropped = [], [], [], 0
    for index, obj in enumerate(root.iter("object")):
        where = f"{path}: object {index}"
        name = (obj.findtext("name") or "").strip()
        if name not in class_of:
            raise DataError(f"{where}: class {name!r} is not in label_list {sorted(class_of)}")
        box = obj.find("bndbox")
        if box is None:
            raise DataError(f"{where}: no <bndbox>")
        x1, y1, x2, y2 = (_number(box, t, where) for t in ("xmin", "ymin", "xmax", "ymax"))
        if min(x1, y1) < -TOLERANCE or x2 > width + TOLERANCE or y2 > height + TOLERANCE:
            raise DataError(f"{where}: box {[x1, y1, x2, y2]} lies outside the {width:g}x{height:g} image")
        x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, width), min(y2, height)
        if x2 <= x1 or y2 <= y1:
            dropped += 1
            continue
        boxes.append([x1, y1, x2, y2])
        classes.append(class_of[name])
        difficult.append(int(obj.findtext("difficult") or 0))
    return height, width, np.asarray(boxes, np.float32).reshape(-1, 4), classes, difficult, dropped


class VOCDataSet(DetDataset):
    """``dataset_dir/anno_path`` lists ``image xml`` pairs (relative to ``dataset_dir``)."""

    def __init__(self, dataset_dir: str = "", anno_path: str = "", label_list: str = "label_list.txt", transforms=()):
        root = Path(dataset_dir)
        names_file = root / label_list
        if not names_file.is_file():
            raise DataError(f"label_list {str(names_file)!r} does not exist; list one class name per line")
        names = [line.strip() for line in names_file.read_text(encoding="utf-8").splitlines() if line.strip()]
        class_of = {n: i for i, n in enumerate(names)}
        listing = root / anno_path
        if not listing.is_file():
            raise DataError(f"anno_path {str(listing)!r} does not exist; it lists 'image annotation.xml' lines")
        records, dropped = [], 0
        for number, line in enumerate(listing.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            parts = line.split()
            if len(parts) != 2:
                raise DataError(f"{listing}:{number}: expected 'image annotation.xml', got {line[:80]!r}")
            image, xml = root / parts[0], root / parts[1]
            for file in (image, xml):
                if not file.is_file():
                    raise DataError(f"{listing}:{number}: {str(file)!r} does not exist")
            height, width, boxes, classes, difficult, lost = parse_voc_xml(xml, class_of)
            dropped += lost
            records.append(
                {
                    "im_file": str(image),
                    "im_id": len(records),
                    "h": height,
                    "w": width,
                    "gt_bbox": boxes,
                    "gt_class": np.asarray(classes, np.int32).reshape(-1, 1),
                    # difficult objects are ignored by training and by the VOC metric, as crowds are
                    "is_crowd": np.asarray(difficult, np.int32).reshape(-1, 1),
                    "source": f"{listing}:{number}",
                }
            )
        if dropped:
            warnings.warn(f"{listing}: dropped {dropped} degenerate boxes (zero width or height)", stacklevel=2)
        super().__init__(records, names, transforms, dropped, str(listing))
