"""``DetMetric`` fed by the detector's raw output: DB post-processing, then PaddleOCR's counting.

The trainer and the eval harness hand a metric the model's outputs (the probability maps, plus
the ``shape`` rows when served) and the labels (evaluation tables, ``table``). Each map is cut to
the resized image (the rest is ``Pad``'s padding), turned into boxes in source pixels with the
``PostProcess`` settings, and counted against the table's polygons and don't-care flags.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import DataError

from ..db_postprocess import DBParams, boxes_from_probability
from ..metrics import DetMetric
from .table import unpack


def boxes_in_source(prob: np.ndarray, shape, params: DBParams) -> tuple[np.ndarray, list[float]]:
    """Boxes and scores of one probability map [H, W] whose image ``shape`` row is
    ``[src_h, src_w, ratio_h, ratio_w]``: the map is cut to the resized image before mapping back."""
    src_h, src_w, ratio_h, ratio_w = (float(v) for v in shape)
    if not (src_h >= 1 and src_w >= 1 and ratio_h > 0 and ratio_w > 0):
        raise DataError(f"an image shape row must be [src_h, src_w, ratio_h, ratio_w] > 0, got {list(shape)}")
    h = min(round(src_h * ratio_h), prob.shape[0])
    w = min(round(src_w * ratio_w), prob.shape[1])
    return boxes_from_probability(prob[:h, :w], round(src_h), round(src_w), params)


class DBDetMetric(DetMetric):
    """``compute(maps [N, 1, H, W], ..., tables)`` -> ``(boxes, ground truths, ignore tags)`` for ``update``."""

    def __init__(self, post: DBParams | None = None, iou_thresh: float = 0.5, dont_care_overlap: float = 0.5,
                 main_indicator: str = "hmean") -> None:  # fmt: skip
        super().__init__(iou_thresh, dont_care_overlap, main_indicator)
        self.post = post or DBParams()

    def compute(self, maps, *rest):
        tables = np.asarray(rest[-1])
        maps = np.asarray(maps)
        if maps.ndim != 4 or maps.shape[1] != 1 or len(tables) != len(maps):
            raise DataError(
                f"DetMetric takes probability maps [N, 1, H, W] and N evaluation tables, got {list(maps.shape)} "
                f"and {len(tables)} labels"
            )
        preds, gts, tags = [], [], []
        for prob, table in zip(maps[:, 0], tables, strict=True):
            shape, polys, ignore = unpack(table)
            preds.append(list(boxes_in_source(prob, shape, self.post)[0]))
            gts.append(polys)
            tags.append(ignore)
        return preds, gts, tags
