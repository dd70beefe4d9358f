"""End-to-end (detection + recognition) line metric, as PaddleOCR's ``tools/end2end`` evaluation.

Per image, every (ground truth, detection) pair whose quadrilaterals (their convex hulls) overlap at
IoU >= ``iou_thresh`` is a candidate; candidates are taken in decreasing IoU, each line and each
detection at most once. A matched ground-truth line is a hit when the texts are equal. Lines
transcribed ``###`` are don't-care: a detection matched to one counts nowhere, an unmatched one is
not a miss. Unmatched detections count against precision, unmatched ground truths against recall;
``char_acc`` is 1 - (edit distance over all pairs, an unmatched side counted against "") / (ground-truth
characters). Texts are compared after full-width forms are folded to ASCII (and spaces dropped with
``ignore_space``), for matched and unmatched lines alike.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import shapely
from rapidfuzz.distance import Levenshtein

from paddlectl.framework.errors import DataError

from .base import OCRMetric, as_list, check_fraction, hmean, ratio
from .polygons import DONT_CARE, iou_matrix, points_of
from .rec import text_of

_FULL_WIDTH = {0x3000: " ", **{c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}}


def folded(text: str, ignore_space: bool) -> str:
    """Full-width ASCII forms and the ideographic space as their ASCII counterparts (PaddleOCR's strQ2B)."""
    text = text.translate(_FULL_WIDTH)
    return text.replace(" ", "") if ignore_space else text


def _lines(items, what: str) -> tuple[list[np.ndarray], list[str]]:
    """(points, text) of each line: a pair, or a mapping with ``points`` and ``text`` or ``transcription``."""
    points, texts = [], []
    for j, item in enumerate(as_list(items, what)):
        where = f"line {j} of {what}"
        if isinstance(item, Mapping):
            text = item.get("text", item.get("transcription"))
            if text is None:
                raise DataError(f"{where} has no 'text' or 'transcription' (keys: {sorted(item)})")
        elif isinstance(item, tuple | list) and len(item) == 2:
            item, text = item
        else:
            raise DataError(f"{where} must be a (points, text) pair or a mapping with 'points' and 'text'")
        points.append(points_of(item, where))
        texts.append(text_of(text, f"the text of {where}"))
    return points, texts


class E2EMetric(OCRMetric):
    """Streaming end-to-end metric: ``update(preds, gts)`` per batch, ``preds[i]`` / ``gts[i]`` image
    i's lines; ``accumulate()`` -> [e2e_precision, e2e_recall, e2e_hmean, char_acc]."""

    NAMES = ("e2e_precision", "e2e_recall", "e2e_hmean", "char_acc")

    def __init__(self, iou_thresh: float = 0.5, ignore_space: bool = False, main_indicator: str = "e2e_hmean") -> None:
        self.iou_thresh = check_fraction(iou_thresh, "E2EMetric.iou_thresh")
        self.ignore_space = bool(ignore_space)
        super().__init__(main_indicator)

    def reset(self) -> None:
        self.hits = self.det_count = self.gt_count = self.gt_chars = self.edits = 0

    def update(self, preds, gts) -> None:
        preds, gts = as_list(preds, "E2EMetric preds"), as_list(gts, "E2EMetric gts")
        if len(preds) != len(gts):
            raise DataError(f"E2EMetric.update: {len(preds)} predictions for {len(gts)} images' ground truths")
        for i, (pred, gt) in enumerate(zip(preds, gts, strict=True)):
            self._image(*_lines(pred, f"image {i}'s predictions"), *_lines(gt, f"image {i}'s ground truths"))

    def _image(self, det_pts, det_texts, gt_pts, gt_texts) -> None:
        hull = np.array([shapely.Polygon(p).convex_hull for p in gt_pts + det_pts], dtype=object)
        iou = iou_matrix(hull[: len(gt_pts)], hull[len(gt_pts) :])
        gt_free, det_free = np.ones(len(gt_pts), bool), np.ones(len(det_pts), bool)
        gt_texts = [folded(t, self.ignore_space) for t in gt_texts]
        det_texts = [folded(t, self.ignore_space) for t in det_texts]
        pairs = np.argwhere(iou >= self.iou_thresh)
        for g, d in pairs[np.argsort(-iou[pairs[:, 0], pairs[:, 1]], kind="stable")]:
            if not (gt_free[g] and det_free[d]):
                continue
            gt_free[g] = det_free[d] = False
            if gt_texts[g] != DONT_CARE:
                self._count(gt_texts[g], det_texts[d])
        for d in np.flatnonzero(det_free):
            self._count(None, det_texts[d])
        for g in np.flatnonzero(gt_free):
            if gt_texts[g] != DONT_CARE:
                self._count(gt_texts[g], None)

    def _count(self, gt: str | None, det: str | None) -> None:
        """One pair, or one unmatched side (None) compared with the empty string."""
        self.edits += Levenshtein.distance(gt or "", det or "")
        if gt is not None:
            self.gt_count += 1
            self.gt_chars += len(gt)
        if det is not None:
            self.det_count += 1
        self.hits += gt is not None and gt == det

    def accumulate(self) -> list[float]:
        precision, recall = ratio(self.hits, self.det_count), ratio(self.hits, self.gt_count)
        char_acc = 1.0 - self.edits / self.gt_chars if self.gt_chars else 0.0
        return [precision, recall, hmean(precision, recall), char_acc]
