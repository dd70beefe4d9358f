"""One label array per sample, because the trainer and the eval harness batch ``(input, label)``.

PaddleOCR keeps several keys per detection sample; ``KeepKeys`` here packs them:

- training, ``[image, threshold_map, threshold_mask, shrink_map, shrink_mask]``: the four maps
  stacked ``[4, H, W]``, the order ``DBLoss`` reads them in;
- evaluation, ``[image, shape, polys, ignore_tags]``: a table ``[1 + rows, 2 + 2 * points]``,
  row 0 the ``shape`` ``[src_h, src_w, ratio_h, ratio_w]``, then one row per region
  ``[ignore, points, x0, y0, x1, y1, ...]`` in source-image pixels, NaN-padded. ``rows`` and
  ``points`` are the largest over the evaluation set (the task sets them), so every label of
  the set has one shape and concatenates.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError

from ..task_base import KeepKeys

TRAIN_KEYS = ["image", "threshold_map", "threshold_mask", "shrink_map", "shrink_mask"]
EVAL_KEYS = ["image", "shape", "polys", "ignore_tags"]


def pack(shape: np.ndarray, polys: np.ndarray, ignore: np.ndarray, rows: int, points: int) -> np.ndarray:
    """The evaluation table of one image (see the module docstring)."""
    if len(polys) > rows or (len(polys) and polys.shape[1] > points):
        raise DataError(
            f"an image has {len(polys)} regions of {polys.shape[1]} points; the table holds {rows}x{points}"
        )
    table = np.full((1 + rows, 2 + 2 * max(points, 1)), np.nan, np.float32)
    table[0, :4] = shape
    for i, (poly, tag) in enumerate(zip(polys, ignore, strict=True)):
        table[1 + i, :2] = (float(tag), len(poly))
        table[1 + i, 2 : 2 + 2 * len(poly)] = np.asarray(poly, np.float32).reshape(-1)
    return table


def unpack(table: np.ndarray) -> tuple[np.ndarray, list[np.ndarray], list[bool]]:
    """``(shape, polygons [P, 2], ignore flags)`` of one evaluation table."""
    table = np.asarray(table, np.float64)
    if table.ndim != 2 or table.shape[1] < 4 or not np.isfinite(table[0, :4]).all():
        raise DataError(f"a det evaluation label must be a table [1 + rows, 2 + 2 * points], got {list(table.shape)}")
    polys, ignore = [], []
    for row in table[1:]:
        if np.isnan(row[0]):
            continue
        n = int(row[1])
        polys.append(row[2 : 2 + 2 * n].reshape(n, 2))
        ignore.append(bool(row[0]))
    return table[0, :4], polys, ignore


class DetKeepKeys(KeepKeys):
    """``KeepKeys`` for detection: ``(image, label array)`` with the label packed as above."""

    def __init__(self, keep_keys) -> None:
        super().__init__(keep_keys)
        if self.keep_keys not in (TRAIN_KEYS, EVAL_KEYS):
            raise ConfigError(
                f"KeepKeys.keep_keys is {self.keep_keys}; det keeps {TRAIN_KEYS} (training) or {EVAL_KEYS} (evaluation)"
            )
        self.training = self.keep_keys == TRAIN_KEYS
        self.rows, self.points = 1, 4

    def __call__(self, data: dict) -> tuple:
        image, *rest = super().__call__(data)
        if self.training:
            return image, np.stack(rest).astype(np.float32)
        return image, pack(*rest, self.rows, self.points)
