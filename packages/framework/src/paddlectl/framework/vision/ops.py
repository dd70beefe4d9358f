"""``paddle.vision.ops``: box coding (``box_coder``), detection post-processing (``nms``) and
PaddleDetection's ``multiclass_nms``.

Arguments are checked here, where a wrong shape or dtype can still be named; the ops themselves
(ops/nms.py) are single records, so a detector's post-process traces and saves with its network.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import elementwise as ew
from ..ops.loss_checks import check_float, check_int
from ..ops.nms import multiclass_nms_op, nms_op
from ..ops.shape import stack, unsqueeze


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


def _centre_size(boxes: Tensor, plus: float):
    """(x_centre, y_centre, width, height) of corner boxes [..., 4]; ``plus`` 1 for pixel boxes."""
    w = boxes[..., 2] - boxes[..., 0] + plus
    h = boxes[..., 3] - boxes[..., 1] + plus
    return boxes[..., 0] + w * 0.5, boxes[..., 1] + h * 0.5, w, h


def _variances(op: str, prior_box_var, prior_box: Tensor):
    """The four variances, each broadcastable against the priors' centre/size (per prior or shared)."""
    if isinstance(prior_box_var, Tensor):
        if tuple(prior_box_var.shape) != tuple(prior_box.shape):
            raise ShapeError(f"{op}: prior_box_var must match prior_box {prior_box.shape}, got {prior_box_var.shape}")
        return [prior_box_var[..., k] for k in range(4)]
    if isinstance(prior_box_var, list | tuple) and len(prior_box_var) == 4:
        return [float(v) for v in prior_box_var]
    raise TypeError(f"{op}: prior_box_var must be a Tensor like prior_box or a list of 4 floats, got {prior_box_var!r}")


def box_coder(
    prior_box, prior_box_var, target_box, code_type="encode_center_size", box_normalized=True, axis=0, name=None
):
    """Paddle's box coding against priors [M, 4]. 'encode_center_size': targets [N, 4] become offsets
    [N, M, 4] ((centre difference) / prior size, log of the size ratio; each over its variance).
    'decode_center_size': offsets [N, M, 4] become corner boxes, the priors laid along dim 1
    (``axis=0``, [M, 4]) or dim 0 (``axis=1``, [N, 4]). Pixel boxes (``box_normalized=False``) count
    both end pixels in a size, as Paddle's kernel does."""
    op = "box_coder"
    for what, t in (("prior_box", prior_box), ("target_box", target_box)):
        if not isinstance(t, Tensor) or t.shape[-1:] != [4]:
            raise ShapeError(f"{op}: {what} must be a tensor of boxes [..., 4], got {getattr(t, 'shape', t)}")
        check_float(op, what, t)
    if prior_box.ndim != 2:
        raise ShapeError(f"{op}: prior_box must be [M, 4], got {prior_box.shape}")
    plus = 0.0 if box_normalized else 1.0
    var = _variances(op, prior_box_var, prior_box)
    if code_type == "encode_center_size":
        if target_box.ndim != 2:
            raise ShapeError(f"{op}: encoding takes target_box [N, 4], got {target_box.shape}")
        pcx, pcy, pw, ph = (unsqueeze(v, 0) for v in _centre_size(prior_box, plus))
        var = [unsqueeze(v, 0) if isinstance(v, Tensor) else v for v in var]
        t = unsqueeze(target_box, 1)
        tcx, tcy = (t[..., 0] + t[..., 2]) * 0.5, (t[..., 1] + t[..., 3]) * 0.5
        tw, th = t[..., 2] - t[..., 0] + plus, t[..., 3] - t[..., 1] + plus
        log, absolute = ew.UNARY["log"], ew.UNARY["abs"]
        parts = [(tcx - pcx) / pw, (tcy - pcy) / ph, log(absolute(tw / pw)), log(absolute(th / ph))]
        return stack([p / v for p, v in zip(parts, var, strict=True)], axis=-1)
    if code_type != "decode_center_size":
        raise ValueError(f"{op}: code_type must be 'encode_center_size' or 'decode_center_size', got {code_type!r}")
    if axis not in (0, 1) or target_box.ndim != 3:
        raise ShapeError(f"{op}: decoding takes target_box [N, M, 4] and axis 0 or 1, got {target_box.shape}, {axis}")
    if target_box.shape[1 - axis] != prior_box.shape[0]:
        raise ShapeError(
            f"{op}: dim {1 - axis} of target_box {target_box.shape} must be prior_box's M={prior_box.shape[0]}"
        )
    spread = 0 if axis == 0 else 1
    pcx, pcy, pw, ph = (unsqueeze(v, spread) for v in _centre_size(prior_box, plus))
    var = [unsqueeze(v, spread) if isinstance(v, Tensor) else v for v in var]
    exp = ew.UNARY["exp"]
    cx = var[0] * target_box[..., 0] * pw + pcx
    cy = var[1] * target_box[..., 1] * ph + pcy
    w, h = exp(var[2] * target_box[..., 2]) * pw, exp(var[3] * target_box[..., 3]) * ph
    return stack([cx - w * 0.5, cy - h * 0.5, cx + w * 0.5 - plus, cy + h * 0.5 - plus], axis=-1)


__all__ = ["box_coder", "multiclass_nms", "nms"]
