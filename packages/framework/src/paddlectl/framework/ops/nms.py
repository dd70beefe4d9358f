"""Non-maximum suppression as ops, so a detector's post-process traces, saves and exports with it.

``nms`` is ``paddle.vision.ops.nms`` (indices of the boxes kept, in score order); ``multiclass_nms3``
is PaddleDetection's deploy post-process (per-class NMS over a batch, rows of class, score and box,
and the count per image). Both kernels live in ``kernels/nms.py``. Their outputs' lengths depend on
the data (the symbol ``nnz``), and they have no gradient (selection is piecewise constant).
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..kernels import nms as nms_kernels
from .index import NNZ


def _nms_forward(ctx, boxes, scores=None, category_idxs=None, *, iou_threshold, categories, top_k):
    """Paddle's three modes: boxes already in order (no scores); sorted by score; per category
    (only ``categories`` kept, then the best ``top_k``)."""
    n = boxes.shape[0]
    order = np.arange(n) if scores is None else np.argsort(-scores, kind="stable")
    classes = np.zeros(n, np.int64) if category_idxs is None else category_idxs.astype(np.int64)
    kept = order[nms_kernels.greedy_nms(boxes[order], classes[order], float(iou_threshold))]
    if category_idxs is not None:
        kept = kept[np.isin(classes[kept], np.asarray(categories, np.int64))]
        if top_k is not None:
            kept = kept[:top_k]
    return kept.astype(np.int64)


def _boxes(rng, n, spread=10.0):
    """``n`` random boxes (x1, y1, x2, y2) that overlap often: corners near each other in a small field."""
    corner = rng.uniform(0, spread, (n, 2))
    return np.concatenate([corner, corner + rng.uniform(1, spread / 2, (n, 2))], axis=1)


def _nms_samples(rng):
    boxes, scores = _boxes(rng, 12), rng.permutation(12) / 12.0
    cats = rng.integers(0, 3, 12)
    base = {"iou_threshold": 0.3, "categories": None, "top_k": None}
    return [
        Sample((boxes, None, None), base),
        Sample((boxes, scores, None), base),
        Sample((boxes, scores, cats), {"iou_threshold": 0.5, "categories": (0, 2), "top_k": 4}),
    ]


nms_op = OpDef(
    "nms",
    _nms_forward,
    None,
    lambda boxes, scores=None, category_idxs=None, **attrs: Spec((NNZ,), np.dtype(np.int64)),
    OPAQUE,
    samples=_nms_samples,
)


def _multiclass_nms_forward(
    ctx, bboxes, scores, *, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized, nms_eta, background_label
):
    out, index, counts = nms_kernels.multiclass_nms(
        np.ascontiguousarray(bboxes),
        np.ascontiguousarray(scores, dtype=bboxes.dtype),
        float(score_threshold),
        int(nms_top_k),
        int(keep_top_k),
        float(nms_threshold),
        bool(normalized),
        float(nms_eta),
        int(background_label),
    )
    return out, index.reshape(-1, 1), counts


def _multiclass_nms_infer(bboxes: Spec, scores: Spec, **attrs):
    return (
        Spec((NNZ, 6), bboxes.dtype),
        Spec((NNZ, 1), np.dtype(np.int32)),
        Spec((bboxes.shape[0],), np.dtype(np.int32)),
    )


def _multiclass_nms_samples(rng):
    bboxes = np.stack([_boxes(rng, 10) for _ in range(2)])
    scores = rng.uniform(0, 1, (2, 3, 10))
    attrs = {
        "score_threshold": 0.2,
        "nms_top_k": 6,
        "keep_top_k": 5,
        "nms_threshold": 0.4,
        "normalized": True,
        "nms_eta": 1.0,
        "background_label": -1,
    }
    pixel = {**attrs, "normalized": False, "nms_eta": 0.9, "keep_top_k": -1, "nms_top_k": -1, "background_label": 0}
    return [Sample((bboxes, scores), attrs), Sample((bboxes, scores), pixel)]


multiclass_nms_op = OpDef(
    "multiclass_nms3",
    _multiclass_nms_forward,
    None,
    _multiclass_nms_infer,
    OPAQUE,
    samples=_multiclass_nms_samples,
)


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """ONNX's boxes as (x1, y1, x2, y2) with x1 <= x2, y1 <= y2: from (x_centre, y_centre, w, h), or
    from (y1, x1, y2, x2) naming any two opposite corners."""
    if center_point_box:
        half = boxes[..., 2:] / 2
        xy = np.concatenate([boxes[..., :2] - half, boxes[..., :2] + half], axis=-1)
    else:
        xy = boxes[..., [1, 0, 3, 2]]
    return np.concatenate([np.minimum(xy[..., :2], xy[..., 2:]), np.maximum(xy[..., :2], xy[..., 2:])], axis=-1)


def _onnx_nms_forward(ctx, boxes, scores, *, max_per_class, iou_threshold, score_threshold, center_point_box):
    """ONNX NonMaxSuppression: for each image and class, boxes over ``score_threshold`` best first
    (ties by index), greedy at IoU > ``iou_threshold``, at most ``max_per_class``; rows of
    (batch, class, box) in that order."""
    corners = _corners(boxes, center_point_box)
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            candidates = np.arange(s.shape[0]) if score_threshold is None else np.nonzero(s > score_threshold)[0]
            order = candidates[np.argsort(-s[candidates], kind="stable")]
            kept = order[nms_kernels.greedy_nms(corners[b][order], np.zeros(len(order), np.int64), iou_threshold)]
            rows += [(b, c, int(i)) for i in kept[:max_per_class]]
    return np.array(rows, np.int64).reshape(-1, 3)


def _onnx_nms_samples(rng):
    boxes = np.stack([_boxes(rng, 8) for _ in range(2)])[..., [1, 0, 3, 2]]  # (y1, x1, y2, x2)
    attrs = {"max_per_class": 3, "iou_threshold": 0.4, "score_threshold": 0.2, "center_point_box": 0}
    centred = {**attrs, "score_threshold": None, "center_point_box": 1, "max_per_class": 8}
    return [
        Sample((boxes, rng.uniform(0, 1, (2, 2, 8))), attrs),
        Sample((boxes, rng.uniform(0, 1, (2, 3, 8))), centred),
    ]


non_max_suppression_op = OpDef(
    "non_max_suppression",
    _onnx_nms_forward,
    None,
    lambda boxes, scores, **attrs: Spec((NNZ, 3), np.dtype(np.int64)),
    OPAQUE,
    samples=_onnx_nms_samples,
)
"""ONNX's NonMaxSuppression (its import rule maps onto it): selected (batch, class, box) indices."""
