"""``paddle.vision.ops``: detection post-processing (``nms``) and PaddleDetection's ``multiclass_nms``.

Arguments are checked here, where a wrong shape or dtype can still be named; the ops themselves
(ops/nms.py) are single records, so a detector's post-process traces and saves with its network.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops.loss_checks import check_float, check_int
from ..ops.nms import multiclass_nms_op, nms_op


def _check_threshold(op: str, name: str, value) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{op}: {name} must lie in [0, 1], got {value}")
    return value


def nms(boxes, iou_threshold=0.3, scores=None, category_idxs=None, categories=None, top_k=None):
    """Indices (int64) of the boxes kept by greedy NMS. ``boxes`` [N, 4] as (x1, y1, x2, y2).
    Without ``scores`` the boxes are taken in the given order; with them, best first. With
    ``category_idxs`` [N] boxes suppress only boxes of their own category, only the ids in
    ``categories`` are kept, and ``top_k`` caps the result (Paddle ignores ``top_k`` otherwise)."""
    op = "nms"
    if not isinstance(boxes, Tensor) or boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ShapeError(
            f"{op}: boxes must be a [N, 4] tensor of (x1, y1, x2, y2), got {getattr(boxes, 'shape', boxes)}"
        )
    check_float(op, "boxes", boxes)
    threshold = _check_threshold(op, "iou_threshold", iou_threshold)
    n = boxes.shape[0]
    for what, t in (("scores", scores), ("category_idxs", category_idxs)):
        if t is not None and (not isinstance(t, Tensor) or tuple(t.shape) != (n,)):
            raise ShapeError(f"{op}: {what} must be a [{n}] tensor (one per box), got {getattr(t, 'shape', t)}")
    if scores is not None:
        check_float(op, "scores", scores)
    if category_idxs is not None:
        if scores is None:
            raise ValueError(f"{op}: category_idxs needs scores; pass the boxes' scores too")
        check_int(op, "category_idxs", category_idxs, "cast it with .astype('int64')")
        if categories is None:
            raise ValueError(f"{op}: category_idxs needs categories, the list of category ids to keep")
        categories = tuple(int(c) for c in categories)
        if top_k is not None and not 0 <= int(top_k) <= n:
            raise ValueError(f"{op}: top_k must lie in [0, {n}] (the number of boxes), got {top_k}")
    return nms_op(
        boxes,
        scores,
        category_idxs,
        iou_threshold=threshold,
        categories=categories if category_idxs is not None else None,
        top_k=None if top_k is None or category_idxs is None else int(top_k),
    )


def multiclass_nms(
    bboxes,
    scores,
    score_threshold,
    nms_top_k,
    keep_top_k,
    nms_threshold=0.3,
    normalized=True,
    nms_eta=1.0,
    background_label=-1,
    return_index=False,
    return_rois_num=True,
    rois_num=None,
    name=None,
):
    """PaddleDetection's ``multiclass_nms`` (``multiclass_nms3``): per image and class, candidates
    scoring over ``score_threshold``, the best ``nms_top_k`` of them (all when -1), greedy NMS at
    ``nms_threshold`` (shrunk by ``nms_eta`` after each kept box while above 0.5), then the best
    ``keep_top_k`` over all classes (all when -1). ``bboxes`` [N, M, 4], ``scores`` [N, C, M].
    Returns ``(out, rois_num, index)``: ``out`` [K, 6] rows of class, score, x1, y1, x2, y2 grouped
    by image then class; ``rois_num`` [N] int32 rows per image; ``index`` [K, 1] int32 (each box's
    row in ``bboxes`` flattened to [N*M, 4]) when ``return_index``, else None."""
    op = "multiclass_nms"
    if rois_num is not None:
        raise ValueError(f"{op}: rois_num (LoD boxes of two-stage detectors) is not supported; pass [N, M, 4] bboxes")
    if not isinstance(bboxes, Tensor) or bboxes.ndim != 3 or bboxes.shape[2] != 4:
        raise ShapeError(f"{op}: bboxes must be a [N, M, 4] tensor, got {getattr(bboxes, 'shape', bboxes)}")
    if (
        not isinstance(scores, Tensor)
        or scores.ndim != 3
        or (scores.shape[0], scores.shape[2]) != tuple(bboxes.shape[:2])
    ):
        raise ShapeError(
            f"{op}: scores must be a [N, C, M] tensor with N={bboxes.shape[0]}, M={bboxes.shape[1]} as in bboxes, "
            f"got {getattr(scores, 'shape', scores)}"
        )
    check_float(op, "bboxes", bboxes)
    check_float(op, "scores", scores)
    for what, k in (("nms_top_k", nms_top_k), ("keep_top_k", keep_top_k)):
        if int(k) < -1:
            raise ValueError(f"{op}: {what} must be -1 (no limit) or a count >= 0, got {k}")
    if not 0.0 < float(nms_eta) <= 1.0:
        raise ValueError(f"{op}: nms_eta must lie in (0, 1], got {nms_eta}")
    out, index, counts = multiclass_nms_op(
        bboxes,
        scores,
        score_threshold=float(score_threshold),
        nms_top_k=int(nms_top_k),
        keep_top_k=int(keep_top_k),
        nms_threshold=_check_threshold(op, "nms_threshold", nms_threshold),
        normalized=bool(normalized),
        nms_eta=float(nms_eta),
        background_label=int(background_label),
    )
    return out, (counts if return_rois_num else None), (index if return_index else None)


__all__ = ["multiclass_nms", "nms"]
