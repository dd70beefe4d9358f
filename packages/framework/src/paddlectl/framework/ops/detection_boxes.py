"""Detection heads' box records, as Paddle's CPU kernels compute them: SSD's ``prior_box``, YOLOv3's
``yolo_box`` decoding, FPN's ``distribute_fpn_proposals``, the RPN's ``generate_proposals`` and
SOLOv2's ``matrix_nms``. None has a gradient (Paddle's have none: their outputs are anchors,
selections or stop-gradient decodings). Selection kernels are in kernels/detection.py; the rest are
a few array expressions, computed in the input's float type as Paddle's kernels are.
"""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..errors import ShapeError
from ..kernels import detection as kernels
from .index import NNZ


def expand_aspect_ratios(ratios, flip: bool) -> tuple:
    """Paddle's ``ExpandAspectRatios``: 1 first, then each new ratio (and its inverse with ``flip``)."""
    out = [1.0]
    for r in ratios:
        if all(abs(r - o) >= 1e-6 for o in out):
            out.append(float(r))
            if flip:
                out.append(1.0 / r)
    return tuple(out)


def _prior_box_forward(ctx, feature, image, *, min_sizes, max_sizes, aspect_ratios, variances, clip, steps, offset,
                       min_max_order):  # fmt: skip
    dtype = feature.dtype if feature.dtype.kind == "f" else np.dtype(np.float32)
    f = lambda v: np.asarray(v, dtype)  # noqa: E731 - the kernel's arithmetic is in T
    fh, fw = feature.shape[2:]
    ih, iw = image.shape[2:]
    step_w, step_h = (f(iw) / f(fw), f(ih) / f(fh)) if steps[0] == 0 or steps[1] == 0 else map(f, steps)
    sizes = []  # (half width, half height) per prior, in Paddle's order
    for s, lo in enumerate(min_sizes):
        ratios = [(f(lo) * np.sqrt(f(r)) / f(2), f(lo) / np.sqrt(f(r)) / f(2)) for r in aspect_ratios]
        big = [(np.sqrt(f(lo) * f(max_sizes[s])) / f(2),) * 2] if max_sizes else []
        if min_max_order:
            square = [(f(lo) / f(2),) * 2]
            rest = [r for r, a in zip(ratios, aspect_ratios, strict=True) if abs(a - 1.0) >= 1e-6]
            sizes += square + big + rest
        else:
            sizes += ratios + big
    half = np.array(sizes, dtype).reshape(1, 1, -1, 2)
    cx = ((np.arange(fw, dtype=dtype) + f(offset)) * step_w).reshape(1, fw, 1)
    cy = ((np.arange(fh, dtype=dtype) + f(offset)) * step_h).reshape(fh, 1, 1)
    cx, cy = np.broadcast_to(cx, (fh, fw, 1)), np.broadcast_to(cy, (fh, fw, 1))
    boxes = np.stack(
        [
            (cx - half[..., 0]) / f(iw),
            (cy - half[..., 1]) / f(ih),
            (cx + half[..., 0]) / f(iw),
            (cy + half[..., 1]) / f(ih),
        ],
        axis=-1,
    ).astype(dtype)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    return boxes, np.broadcast_to(np.asarray(variances, dtype), boxes.shape).copy()


def _prior_count(min_sizes, max_sizes, aspect_ratios, min_max_order) -> int:
    return len(min_sizes) * len(aspect_ratios) + len(max_sizes)


def _prior_box_infer(feature: Spec, image: Spec, *, min_sizes, max_sizes, aspect_ratios, min_max_order, **attrs):
    dtype = feature.dtype if np.dtype(feature.dtype).kind == "f" else np.dtype(np.float32)
    shape = (*feature.shape[2:], _prior_count(min_sizes, max_sizes, aspect_ratios, min_max_order), 4)
    return Spec(shape, dtype), Spec(shape, dtype)


_PRIOR_ATTRS = {
    "min_sizes": (2.0, 4.0), "max_sizes": (5.0, 7.0), "aspect_ratios": expand_aspect_ratios((2.0,), True),
    "variances": (0.1, 0.1, 0.2, 0.2), "clip": True, "steps": (0.0, 0.0), "offset": 0.5, "min_max_order": True,
}  # fmt: skip

prior_box_op = OpDef(
    "prior_box",
    _prior_box_forward,
    None,
    _prior_box_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.uniform(size=(1, 3, 6, 9)), rng.uniform(size=(1, 3, 9, 12))), _PRIOR_ATTRS),
        Sample(
            (rng.uniform(size=(1, 3, 4, 5)), rng.uniform(size=(1, 3, 16, 20))),
            {**_PRIOR_ATTRS, "max_sizes": (), "min_max_order": False, "steps": (4.0, 4.0)},
        ),
    ],  # fmt: skip
)
"""SSD's prior boxes [H, W, P, 4] (normalized corners per feature-map cell) and their variances."""


def _sigmoid(v):
    return (1 / (1 + np.exp(-v))).astype(v.dtype, copy=False)


def _yolo_box_forward(ctx, x, img_size, *, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox, scale_x_y,
                      iou_aware, iou_aware_factor):  # fmt: skip
    n, c, h, w = x.shape
    an = len(anchors) // 2
    if c != an * (5 + class_num + int(iou_aware)):
        raise ShapeError(
            f"yolo_box: x must have {len(anchors) // 2} anchors x (5 + class_num={class_num}"
            f"{' + 1 for iou_aware' if iou_aware else ''}) = {an * (5 + class_num + int(iou_aware))} channels, got {c}"
        )
    t = x.dtype.type
    pred = x[:, an:] if iou_aware else x
    pred = pred.reshape(n, an, 5 + class_num, h, w)
    conf = _sigmoid(pred[:, :, 4])
    if iou_aware:
        conf = (conf ** t(1 - iou_aware_factor) * _sigmoid(x[:, :an]) ** t(iou_aware_factor)).astype(x.dtype)
    img = img_size.astype(np.int64)
    img_h, img_w = img[:, 0].reshape(n, 1, 1, 1).astype(x.dtype), img[:, 1].reshape(n, 1, 1, 1).astype(x.dtype)
    bias, scale = t(-0.5 * (scale_x_y - 1.0)), t(scale_x_y)
    grid_x, grid_y = np.arange(w, dtype=x.dtype).reshape(1, 1, 1, w), np.arange(h, dtype=x.dtype).reshape(1, 1, h, 1)
    anchor = np.asarray(anchors, x.dtype).reshape(1, an, 2, 1, 1)
    cx = (grid_x + _sigmoid(pred[:, :, 0]) * scale + bias) * img_w / t(w)
    cy = (grid_y + _sigmoid(pred[:, :, 1]) * scale + bias) * img_h / t(h)
    bw = np.exp(pred[:, :, 2]) * anchor[:, :, 0] * img_w / t(downsample_ratio * w)
    bh = np.exp(pred[:, :, 3]) * anchor[:, :, 1] * img_h / t(downsample_ratio * h)
    boxes = np.stack([cx - bw / t(2), cy - bh / t(2), cx + bw / t(2), cy + bh / t(2)], axis=-1)
    if clip_bbox:
        boxes[..., :2] = np.maximum(boxes[..., :2], 0)
        boxes[..., 2] = np.minimum(boxes[..., 2], img_w - 1)
        boxes[..., 3] = np.minimum(boxes[..., 3], img_h - 1)
    scores = conf[:, :, None] * _sigmoid(pred[:, :, 5:])
    kept = (conf >= t(conf_thresh))[..., None]
    boxes = np.where(kept, boxes, 0).astype(x.dtype)
    scores = np.where(kept, np.moveaxis(scores, 2, -1), 0).astype(x.dtype)
    return boxes.reshape(n, -1, 4), scores.reshape(n, -1, class_num)


def _yolo_box_infer(x: Spec, img_size: Spec, *, anchors, class_num, **attrs):
    count = len(anchors) // 2 * x.shape[2] * x.shape[3] if all(isinstance(d, int) for d in x.shape[2:]) else "boxes"
    return Spec((x.shape[0], count, 4), x.dtype), Spec((x.shape[0], count, class_num), x.dtype)


_YOLO_ATTRS = {
    "anchors": (10, 13, 16, 30), "class_num": 2, "conf_thresh": 0.4, "downsample_ratio": 8, "clip_bbox": True,
    "scale_x_y": 1.0, "iou_aware": False, "iou_aware_factor": 0.5,
}  # fmt: skip

yolo_box_op = OpDef(
    "yolo_box",
    _yolo_box_forward,
    None,
    _yolo_box_infer,
    OPAQUE,
    samples=lambda rng: [
        Sample((rng.standard_normal((2, 14, 3, 4)), np.array([[40, 50], [30, 20]], np.int32)), _YOLO_ATTRS),
        Sample(
            (rng.standard_normal((1, 16, 2, 2)), np.array([[16, 16]], np.int32)),
            {**_YOLO_ATTRS, "iou_aware": True, "clip_bbox": False, "scale_x_y": 1.2},
        ),
    ],  # fmt: skip
)
"""YOLOv3's boxes [N, A*H*W, 4] (corners in image pixels) and class scores [N, A*H*W, classes]; a
box whose objectness is under ``conf_thresh`` is all zeros."""


def _fpn_levels(rois: np.ndarray, min_level, max_level, refer_level, refer_scale, pixel_offset) -> np.ndarray:
    t = rois.dtype.type
    w, h = rois[:, 2] - rois[:, 0], rois[:, 3] - rois[:, 1]
    area = (w + t(1)) * (h + t(1)) if pixel_offset else w * h
    area = np.where((w < 0) | (h < 0), t(0), area)
    level = np.floor(np.log2(np.sqrt(area) / t(refer_scale) + t(1e-6)) + t(refer_level)).astype(np.int64)
    return np.clip(level, min_level, max_level)


def _fpn_forward(ctx, rois, rois_num, *, min_level, max_level, refer_level, refer_scale, pixel_offset):
    """Per level, its RoIs in their original order; the restore index (where each original RoI
    sits in the levels' concatenation); per level, the RoIs of each image."""
    counts = rois_num.astype(np.int64)
    if counts.sum() != rois.shape[0] or (counts < 0).any():
        raise ShapeError(
            f"distribute_fpn_proposals: rois_num must sum to the {rois.shape[0]} RoIs, got {counts.tolist()}"
        )
    level = _fpn_levels(rois, min_level, max_level, refer_level, refer_scale, pixel_offset)
    image = np.repeat(np.arange(counts.size), counts)
    order = np.argsort(level, kind="stable")
    restore = np.empty(rois.shape[0], np.int32)
    restore[order] = np.arange(rois.shape[0], dtype=np.int32)
    levels = range(min_level, max_level + 1)
    multi = [rois[level == lv] for lv in levels]
    per_image = [np.bincount(image[level == lv], minlength=counts.size).astype(np.int32) for lv in levels]
    return (*multi, restore.reshape(-1, 1), *per_image)


def _fpn_infer(rois: Spec, rois_num: Spec, *, min_level, max_level, **attrs):
    levels = max_level - min_level + 1
    return (
        *[Spec((NNZ, 4), rois.dtype)] * levels,
        Spec((rois.shape[0], 1), np.dtype(np.int32)),
        *[Spec(tuple(rois_num.shape), np.dtype(np.int32))] * levels,
    )


def _fpn_samples(rng):
    corner = rng.uniform(0, 300, (9, 2))
    rois = np.concatenate([corner, corner + rng.uniform(1, 400, (9, 2))], axis=1)
    attrs = {"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224, "pixel_offset": False}
    return [Sample((rois, np.array([4, 0, 5], np.int32)), attrs)]


distribute_fpn_proposals_op = OpDef(
    "distribute_fpn_proposals", _fpn_forward, None, _fpn_infer, OPAQUE, samples=_fpn_samples
)
"""FPN's RoI assignment: level floor(refer_level + log2(sqrt(area) / refer_scale)), clipped."""


def _proposals_forward(ctx, scores, deltas, img_size, anchors, variances, *, pre_nms_top_n, post_nms_top_n, nms_thresh,
                       min_size, eta, pixel_offset):  # fmt: skip
    n, a, h, w = scores.shape
    flat_scores = scores.transpose(0, 2, 3, 1).reshape(n, -1)
    flat_deltas = deltas.reshape(n, a, 4, h, w).transpose(0, 3, 4, 1, 2).reshape(n, -1, 4)
    anchors, variances = anchors.reshape(-1, 4), variances.reshape(-1, 4)
    if anchors.shape[0] != h * w * a or variances.shape != anchors.shape:
        raise ShapeError(
            f"generate_proposals: anchors and variances must be [H, W, A, 4] = [{h}, {w}, {a}, 4], got "
            f"{anchors.shape[0]} and {variances.shape[0]} boxes"
        )
    boxes, probs = [], []
    for i in range(n):
        b, p = kernels.proposals(
            np.ascontiguousarray(flat_scores[i]), np.ascontiguousarray(flat_deltas[i], dtype=scores.dtype),
            np.ascontiguousarray(anchors, dtype=scores.dtype), np.ascontiguousarray(variances, dtype=scores.dtype),
            float(img_size[i, 0]), float(img_size[i, 1]), int(pre_nms_top_n), int(post_nms_top_n), float(nms_thresh),
            float(min_size), float(eta), bool(pixel_offset),
        )  # fmt: skip
        boxes.append(b)
        probs.append(p)
    counts = np.array([len(b) for b in boxes], np.int32)
    return np.concatenate(boxes).astype(scores.dtype), np.concatenate(probs).reshape(-1, 1), counts


def _proposals_infer(scores: Spec, *others, **attrs):
    return Spec((NNZ, 4), scores.dtype), Spec((NNZ, 1), scores.dtype), Spec((scores.shape[0],), np.dtype(np.int32))


def _proposals_samples(rng):
    anchors = np.concatenate([c := rng.uniform(0, 40, (4, 5, 3, 2)), c + rng.uniform(4, 30, (4, 5, 3, 2))], axis=-1)
    attrs = {"pre_nms_top_n": 30, "post_nms_top_n": 10, "nms_thresh": 0.5, "min_size": 0.1, "eta": 1.0,
             "pixel_offset": False}  # fmt: skip
    inputs = (rng.uniform(size=(2, 3, 4, 5)), rng.standard_normal((2, 12, 4, 5)) * 0.3,
              np.array([[64.0, 64.0], [50.0, 40.0]]), anchors, rng.uniform(0.1, 1.0, (4, 5, 3, 4)))  # fmt: skip
    return [Sample(inputs, attrs), Sample(inputs, {**attrs, "pixel_offset": True, "eta": 0.8, "pre_nms_top_n": -1})]


generate_proposals_op = OpDef(
    "generate_proposals", _proposals_forward, None, _proposals_infer, OPAQUE, samples=_proposals_samples
)
"""The RPN's proposals: boxes [K, 4], scores [K, 1], count per image [N] (int32)."""


def _matrix_nms_forward(ctx, bboxes, scores, *, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian,
                        gaussian_sigma, background_label, normalized):  # fmt: skip
    out, index, counts = kernels.matrix_nms(
        np.ascontiguousarray(bboxes), np.ascontiguousarray(scores, dtype=bboxes.dtype), float(score_threshold),
        float(post_threshold), int(nms_top_k), int(keep_top_k), bool(use_gaussian), float(gaussian_sigma),
        int(background_label), bool(normalized),
    )  # fmt: skip
    return out, index.reshape(-1, 1), counts


def _matrix_nms_infer(bboxes: Spec, scores: Spec, **attrs):
    return (
        Spec((NNZ, 6), bboxes.dtype),
        Spec((NNZ, 1), np.dtype(np.int32)),
        Spec((bboxes.shape[0],), np.dtype(np.int32)),
    )


def _matrix_nms_samples(rng):
    corner = rng.uniform(0, 10, (2, 12, 2))
    bboxes = np.concatenate([corner, corner + rng.uniform(1, 6, (2, 12, 2))], axis=-1)
    attrs = {"score_threshold": 0.2, "post_threshold": 0.1, "nms_top_k": 8, "keep_top_k": 6, "use_gaussian": False,
             "gaussian_sigma": 2.0, "background_label": 0, "normalized": True}  # fmt: skip
    scores = rng.uniform(size=(2, 3, 12))
    return [Sample((bboxes, scores), attrs),
            Sample((bboxes, scores), {**attrs, "use_gaussian": True, "keep_top_k": -1, "background_label": -1,
                                      "normalized": False})]  # fmt: skip


matrix_nms_op = OpDef("matrix_nms", _matrix_nms_forward, None, _matrix_nms_infer, OPAQUE, samples=_matrix_nms_samples)
"""SOLOv2's Matrix NMS: rows (class, decayed score, box) best first per image, indices, counts."""


def _yolo_targets_forward(ctx, x, gt_box, gt_label, gt_score, *, anchors, anchor_mask, class_num, ignore_thresh,
                          downsample_ratio, scale_x_y, use_label_smooth):  # fmt: skip
    mask = np.asarray(anchor_mask, np.int64)
    if x.shape[1] != mask.size * (5 + class_num):
        raise ShapeError(
            f"yolo_loss: x must have len(anchor_mask)={mask.size} x (5 + class_num={class_num}) = "
            f"{mask.size * (5 + class_num)} channels, got {x.shape[1]}"
        )
    if gt_label.size and (gt_label.min() < 0 or gt_label.max() >= class_num):
        raise ShapeError(f"yolo_loss: gt_label must lie in [0, {class_num}), got {gt_label.min()}..{gt_label.max()}")
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    return kernels.yolo_targets(
        np.ascontiguousarray(x), np.ascontiguousarray(gt_box, dtype=np.float64), gt_label.astype(np.int64),
        np.ascontiguousarray(gt_score, dtype=np.float64), np.asarray(anchors, np.float64), mask, int(class_num),
        float(ignore_thresh), int(downsample_ratio), float(scale_x_y), 1.0 - smooth, smooth,
    )  # fmt: skip


def _yolo_targets_infer(x: Spec, gt_box: Spec, gt_label: Spec, gt_score: Spec, *, anchor_mask, class_num, **attrs):
    n, b, m = x.shape[0], gt_box.shape[1], len(anchor_mask)
    return (
        Spec((n, b, 5 + class_num), np.dtype(np.int64)),
        Spec((n, b, 4), x.dtype),
        Spec((n, b, 2), x.dtype),
        Spec((n, b, class_num), x.dtype),
        Spec((n, m, *x.shape[2:]), x.dtype),
        Spec((n, m, *x.shape[2:]), x.dtype),
    )


def _yolo_targets_samples(rng):
    gt = np.concatenate([rng.uniform(0.1, 0.9, (2, 3, 2)), rng.uniform(0.05, 0.5, (2, 3, 2))], axis=-1)
    gt[1, 2, 2] = 0.0  # an empty (padding) truth
    attrs = {"anchors": (10, 13, 16, 30, 33, 23), "anchor_mask": (1, 2), "class_num": 2, "ignore_thresh": 0.5,
             "downsample_ratio": 8, "scale_x_y": 1.0, "use_label_smooth": True}  # fmt: skip
    inputs = (rng.standard_normal((2, 14, 4, 4)), gt, rng.integers(0, 2, (2, 3)).astype(np.int32), np.ones((2, 3)))
    return [Sample(inputs, attrs)]


yolo_targets_op = OpDef(
    "yolo_loss_targets", _yolo_targets_forward, None, _yolo_targets_infer, OPAQUE, samples=_yolo_targets_samples
)
"""YOLOv3's loss targets (matching, location and class targets, objectness weights): the part of
``yolo_loss`` with no gradient, computed as Paddle's kernel does; the loss itself is ops on them."""
