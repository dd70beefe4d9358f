"""Detection metrics: COCO AP by pycocotools' ``COCOeval`` (never re-implemented) and Pascal VOC mAP.

Both take, per image, ground truth and detections in source-image pixels:
``GroundTruth(image_id, height, width, boxes [M, 4] x1y1x2y2, classes [M], ignore [M])`` and
detections ``[N, 6]`` = class, score, x1, y1, x2, y2 (PaddleDetection's deploy rows).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paddlectl.framework.errors import DataError


@dataclass
class GroundTruth:
    image_id: int
    height: float
    width: float
    boxes: np.ndarray
    classes: np.ndarray
    ignore: np.ndarray  # COCO iscrowd / VOC difficult


def _check(truths: Sequence[GroundTruth], detections: Sequence[np.ndarray]) -> None:
    if len(truths) != len(detections):
        raise DataError(f"{len(detections)} detection lists for {len(truths)} images; give one per image")
    for det in detections:
        if np.ndim(det) != 2 or np.shape(det)[1] != 6:
            raise DataError(f"detections must be [N, 6] (class, score, x1, y1, x2, y2), got {np.shape(det)}")


def coco_eval(
    truths: Sequence[GroundTruth], detections: Sequence[np.ndarray], names: Sequence[str]
) -> dict[str, float]:
    """``bbox_ap`` (AP@[.5:.95]), ``bbox_ap50``, ``bbox_ap75``, ``bbox_ap_small/medium/large`` and
    ``ap_<class>`` (AP@[.5:.95] per class, read from COCOeval's precision table as
    PaddleDetection's ``classwise`` report reads it); -1 where COCOeval has nothing to average."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    _check(truths, detections)
    images, annotations, results = [], [], []
    for truth, det in zip(truths, detections, strict=True):
        images.append({"id": truth.image_id, "height": truth.height, "width": truth.width})
        for box, cls, ignore in zip(truth.boxes, truth.classes, truth.ignore, strict=True):
            w, h = float(box[2] - box[0]), float(box[3] - box[1])
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": truth.image_id,
                    "category_id": int(cls) + 1,
                    "bbox": [float(box[0]), float(box[1]), w, h],
                    "area": w * h,
                    "iscrowd": int(ignore),
                }
            )
        for cls, score, x1, y1, x2, y2 in np.asarray(det, np.float64).tolist():
            results.append(
                {
                    "image_id": truth.image_id,
                    "category_id": int(cls) + 1,
                    "bbox": [x1, y1, x2 - x1, y2 - y1],
                    "score": score,
                }
            )
    keys = ["bbox_ap", "bbox_ap50", "bbox_ap75", "bbox_ap_small", "bbox_ap_medium", "bbox_ap_large"]
    per_class = {f"ap_{n}": -1.0 for n in names}
    if not results:
        return {**dict.fromkeys(keys, 0.0), **{k: 0.0 for k in per_class}}
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {
            "images": images,
            "annotations": annotations,
            "categories": [{"id": i + 1, "name": n} for i, n in enumerate(names)],
        }
        gt.createIndex()
        evaluator = COCOeval(gt, gt.loadRes(results), "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    out = {k: float(v) for k, v in zip(keys, evaluator.stats[:6], strict=True)}
    precision = evaluator.eval["precision"]  # [IoU thresholds, recall points, classes, areas, max dets]
    for k, name in enumerate(names):
        values = precision[:, :, k, 0, -1]
        values = values[values > -1]
        per_class[f"ap_{name}"] = float(values.mean()) if values.size else -1.0
    return {**out, **per_class}


def voc_ap(recall: np.ndarray, precision: np.ndarray, eleven_point: bool = False) -> float:
    """Area under one class's precision/recall curve: VOC2010+'s all-point interpolation, or
    VOC2007's 11-point mean (PaddleDetection's ``map_type: 11point``)."""
    if eleven_point:
        return float(
            np.mean([precision[recall >= t].max() if (recall >= t).any() else 0.0 for t in np.linspace(0, 1, 11)])
        )
    r = np.concatenate([[0.0], recall, [1.0]])
    p = np.concatenate([[0.0], precision, [0.0]])
    p = np.maximum.accumulate(p[::-1])[::-1]
    steps = np.flatnonzero(r[1:] != r[:-1])
    return float(np.sum((r[steps + 1] - r[steps]) * p[steps + 1]))


def _iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    lt, rb = np.maximum(box[:2], boxes[:, :2]), np.minimum(box[2:], boxes[:, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), 1)
    return inter / (np.prod(box[2:] - box[:2]) + np.prod(boxes[:, 2:] - boxes[:, :2], 1) - inter)


def voc_map(truths, detections, names, iou_threshold: float = 0.5, eleven_point: bool = False) -> dict[str, float]:
    """``mAP`` over classes with objects, and ``ap_<class>``: detections sorted by score, each a true
    positive when it overlaps an unmatched object of its class by ``iou_threshold``; difficult
    objects neither count nor penalise (Pascal VOC's devkit rules)."""
    _check(truths, detections)
    per_class = {}
    for k, name in enumerate(names):
        rows, total = [], 0
        for i, (truth, det) in enumerate(zip(truths, detections, strict=True)):
            total += int(np.sum((truth.classes == k) & ~truth.ignore))
            rows += [(s, i, b) for c, s, *b in np.asarray(det).tolist() if int(c) == k]
        if total == 0:
            continue
        rows.sort(key=lambda r: -r[0])
        used = {i: np.zeros(len(t.boxes), bool) for i, t in enumerate(truths)}
        hits = np.zeros(len(rows))
        counted = np.ones(len(rows), bool)
        for n, (_, i, box) in enumerate(rows):
            truth = truths[i]
            mine = np.flatnonzero(truth.classes == k)
            if not len(mine):
                continue
            overlaps = _iou(np.asarray(box), truth.boxes[mine])
            best = int(np.argmax(overlaps))
            if overlaps[best] < iou_threshold:
                continue
            if truth.ignore[mine[best]]:
                counted[n] = False
            elif not used[i][mine[best]]:
                used[i][mine[best]] = True
                hits[n] = 1
        hits = hits[counted]
        tp = np.cumsum(hits)
        fp = np.cumsum(1 - hits)
        recall = tp / total
        precision = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        per_class[f"ap_{name}"] = voc_ap(recall, precision, eleven_point)
    mean = float(np.mean(list(per_class.values()))) if per_class else 0.0
    return {"mAP": mean, **per_class}
