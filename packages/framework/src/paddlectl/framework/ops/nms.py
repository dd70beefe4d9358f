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

_DATA_SIZED = "the number of boxes kept is data: no input's dims bind the symbol nnz"


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
    exempt={"trace": _DATA_SIZED},
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
    exempt={"trace": _DATA_SIZED},
)
