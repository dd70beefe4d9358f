"""Text detection precision / recall / hmean, counted as PaddleOCR's ``DetMetric`` counts them.

PaddleOCR's ``DetectionIoUEvaluator`` (from the ICDAR 2015 protocol): per image, polygons that are
not valid and simple are skipped; a detection covered by more than ``dont_care_overlap`` of its own
area by a don't-care ground truth (``###``) is dropped from both counts; then ground truths and
detections are paired one to one, greedily in ground-truth order, at IoU strictly above
``iou_thresh``. Counts are summed over all images before the ratios are taken, so the result is the
dataset's, not a mean of per-image ratios.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from paddlectl.framework.errors import DataError

from .base import OCRMetric, as_list, check_fraction, hmean, ratio
from .polygons import DONT_CARE, intersection_areas, iou_matrix, points_of, to_geometries, usable


def evaluate_image(preds, gts, ignore, iou_thresh: float = 0.5, dont_care_overlap: float = 0.5) -> tuple[int, int, int]:
    """(care ground truths, care detections, matched pairs) for one image; ``preds`` and ``gts`` are
    lists of [N, 2] point arrays, ``ignore`` one bool per ground truth (True: don't care)."""
    gt_geoms, det_geoms = to_geometries(gts), to_geometries(preds)
    keep_gt, keep_det = usable(gt_geoms), usable(det_geoms)
    gt_geoms, ignore, det_geoms = gt_geoms[keep_gt], np.asarray(ignore, dtype=bool)[keep_gt], det_geoms[keep_det]
    det_area = np.array([g.area for g in det_geoms])
    covered = intersection_areas(det_geoms, gt_geoms[ignore])
    det_ignored = (covered > dont_care_overlap * det_area[:, None]).any(axis=1) & (det_area > 0)
    iou = iou_matrix(gt_geoms, det_geoms)
    det_free = ~det_ignored
    matched = 0
    for g in np.flatnonzero(~ignore):
        hits = np.flatnonzero(det_free & (iou[g] > iou_thresh))
        if hits.size:
            det_free[hits[0]] = False
            matched += 1
    return int((~ignore).sum()), int((~det_ignored).sum()), matched


class DetMetric(OCRMetric):
    """Streaming det metric: ``update(preds, gts[, ignore_tags])`` per batch, ``accumulate()`` ->
    [precision, recall, hmean] (``name()`` order), ``result()`` -> the same as a dict.

    Per batch, ``preds[i]`` is image i's detections (polygons, or a record with ``"points"``: a list
    of polygons), ``gts[i]`` its ground-truth polygons or det label entries
    (``{"transcription", "points"}``, ``###`` = don't care), ``ignore_tags[i]`` one bool per ground
    truth (overrides the transcriptions). ``compute`` is the identity: a task that feeds raw model
    outputs runs the DB post-processing first.
    """

    NAMES = ("precision", "recall", "hmean")

    def __init__(self, iou_thresh: float = 0.5, dont_care_overlap: float = 0.5, main_indicator: str = "hmean") -> None:
        self.iou_thresh = check_fraction(iou_thresh, "DetMetric.iou_thresh")
        self.dont_care_overlap = check_fraction(dont_care_overlap, "DetMetric.dont_care_overlap")
        super().__init__(main_indicator)

    def reset(self) -> None:
        self.gt_care = self.det_care = self.matched = 0

    def update(self, preds, gts, ignore_tags=None) -> None:
        preds, gts = as_list(preds, "DetMetric preds"), as_list(gts, "DetMetric gts")
        tags = [None] * len(gts) if ignore_tags is None else as_list(ignore_tags, "DetMetric ignore_tags")
        if not len(preds) == len(gts) == len(tags):
            raise DataError(
                f"DetMetric.update: {len(preds)} predictions, {len(gts)} ground truths and {len(tags)} ignore "
                "tag lists; pass one entry per image in each"
            )
        for i, (pred, gt, tag) in enumerate(zip(preds, gts, tags, strict=True)):
            counts = evaluate_image(*self._image(i, pred, gt, tag), self.iou_thresh, self.dont_care_overlap)
            self.gt_care += counts[0]
            self.det_care += counts[1]
            self.matched += counts[2]

    @staticmethod
    def _image(i: int, pred, gt, tag) -> tuple[list, list, list]:
        if isinstance(pred, Mapping):
            pred = pred.get("points", [])
        pred_pts = [
            points_of(p, f"prediction {j} of image {i}")
            for j, p in enumerate(as_list(pred, f"image {i}'s predictions"))
        ]
        gt = as_list(gt, f"image {i}'s ground truths")
        gt_pts = [points_of(g, f"ground truth {j} of image {i}") for j, g in enumerate(gt)]
        if tag is None:
            ignore = [isinstance(g, Mapping) and g.get("transcription") == DONT_CARE for g in gt]
        else:
            ignore = [bool(t) for t in as_list(tag, f"image {i}'s ignore tags")]
            if len(ignore) != len(gt):
                raise DataError(f"image {i} has {len(gt)} ground truths but {len(ignore)} ignore tags")
        return pred_pts, gt_pts, ignore

    def accumulate(self) -> list[float]:
        precision, recall = ratio(self.matched, self.det_care), ratio(self.matched, self.gt_care)
        return [precision, recall, hmean(precision, recall)]
