"""One label array per sample, because the trainer and the eval harness batch ``(image, label)``.

PaddleDetection keeps ``gt_bbox``, ``gt_class``, ``is_crowd``, ``im_shape``, ``scale_factor`` and
``im_id`` as separate keys and pads the boxes to ``num_max_boxes`` (``PadGT``); here they are one
table ``[1 + num_max_boxes, 6]``:

- row 0: ``[input height, input width, scale_y, scale_x, image id, number of objects]``
  (``scale`` = input pixels per source pixel, PaddleDetection's ``scale_factor``);
- then one row per object ``[class index, x1, y1, x2, y2, iscrowd]`` in input pixels, and
  padding rows of class -1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paddlectl.framework.errors import DataError

WIDTH = 6


@dataclass
class Label:
    height: int
    width: int
    scale: np.ndarray  # (scale_y, scale_x)
    image_id: int
    classes: np.ndarray  # [M] int
    boxes: np.ndarray  # [M, 4] x1y1x2y2, input pixels
    crowd: np.ndarray  # [M] bool


def pack(data: dict, num_max_boxes: int) -> np.ndarray:
    """The table of a transformed sample (keys as PaddleDetection's reader names them)."""
    boxes, classes = data["gt_bbox"], data["gt_class"].reshape(-1)
    if len(boxes) > num_max_boxes:
        raise DataError(
            f"{data.get('source', 'a sample')}: {len(boxes)} objects, more than PadGT.num_max_boxes "
            f"{num_max_boxes}; raise num_max_boxes"
        )
    table = np.zeros((1 + num_max_boxes, WIDTH), np.float32)
    table[1:, 0] = -1
    table[0] = [*data["im_shape"], *data["scale_factor"], data["im_id"], len(boxes)]
    table[1 : 1 + len(boxes), 0] = classes
    table[1 : 1 + len(boxes), 1:5] = boxes
    table[1 : 1 + len(boxes), 5] = data.get("is_crowd", np.zeros(len(boxes))).reshape(-1)
    return table


def _checked(tables: np.ndarray, ndim: int) -> np.ndarray:
    tables = np.asarray(tables, np.float32)
    if tables.ndim != ndim or tables.shape[-1] != WIDTH or tables.shape[-2] < 1 or not np.isfinite(tables).all():
        raise DataError(
            f"a detection label must be a finite table [1 + num_max_boxes, {WIDTH}] (see paddlectl.detection.data.labels), "
            f"got shape {list(tables.shape)}{' for a batch of them' if ndim == 3 else ''}"
        )
    return tables


def objects(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A batch of tables ``[N, 1 + M, 6]`` as arrays over ``[N, K]`` object slots, ``K`` the most
    objects an image of the batch holds: ``(classes, boxes [N, K, 4], listed, crowd)``; ``listed``
    marks the slots holding an object (the rest are padding)."""
    tables = _checked(tables, 3)
    rows = tables[:, 1 : 1 + int(tables[:, 0, 5].max(initial=0))]
    listed = np.arange(rows.shape[1])[None, :] < tables[:, 0, 5:6]
    return np.where(listed, rows[..., 0], 0).astype(np.int64), rows[..., 1:5], listed, listed & (rows[..., 5] > 0)


def unpack(table: np.ndarray) -> Label:
    """The ``Label`` of one table; anything not shaped like one is a DataError."""
    table = _checked(table, 2)
    count = int(table[0, 5])
    rows = table[1 : 1 + count]
    return Label(
        int(table[0, 0]),
        int(table[0, 1]),
        table[0, 2:4].copy(),
        int(table[0, 4]),
        rows[:, 0].astype(np.int64),
        rows[:, 1:5].copy(),
        rows[:, 5] > 0,
    )
