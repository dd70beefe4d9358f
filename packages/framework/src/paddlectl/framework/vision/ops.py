"""``paddle.vision.ops``: box coding (``box_coder``, ``prior_box``, ``yolo_box``), detection
post-processing (``nms``, PaddleDetection's ``multiclass_nms``, ``matrix_nms``), two-stage detectors'
RoI ops (``generate_proposals``, ``distribute_fpn_proposals``, ``roi_align``, ``roi_pool``,
``psroi_pool``) and deformable convolution (``deform_conv2d``, ``DeformConv2D``).

Arguments are checked here, where a wrong shape or dtype can still be named; the ops themselves
(ops/nms.py, ops/roi_ops.py, ops/deform_conv.py, ops/detection_boxes.py) are single records, so a
detector's post-process traces and saves with its network.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..core.tensor import Tensor
from ..errors import DataError, ShapeError
from ..ops import elementwise as ew
from ..ops._util import constant
from ..ops.creation import arange, ones_like, zeros_like
from ..ops.deform_conv import deform_conv2d_columns
from ..ops.detection_boxes import (
    distribute_fpn_proposals_op,
    expand_aspect_ratios,
    generate_proposals_op,
    matrix_nms_op,
    prior_box_op,
    yolo_box_op,
    yolo_targets_op,
)
from ..ops.image_decode import decode_jpeg_op
from ..ops.index import gather, take_along_axis
from ..ops.loss_checks import check_float, check_int
from ..ops.nms import multiclass_nms_op, nms_op
from ..ops.pointwise_losses import binary_cross_entropy_with_logits
from ..ops.reduce import sum as reduce_sum
from ..ops.roi_ops import psroi_pool_op, roi_align_op, roi_pool_argmax_op
from ..ops.scan import cumsum
from ..ops.shape import reshape, stack, unsqueeze


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


def _pair(op: str, output_size) -> tuple[int, int]:
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2 or not all(isinstance(v, int) and v > 0 for v in size):
        raise ShapeError(f"{op}: output_size must be a positive int or (height, width), got {output_size!r}")
    return size


def _roi_inputs(op: str, x, boxes, boxes_num) -> Tensor:
    """Checks a RoI op's arguments and returns each box's image index ([R] int64, from ``boxes_num``,
    the boxes per image in order) as ops, so a traced detector computes it from its own counts."""
    if not isinstance(x, Tensor) or x.ndim != 4:
        raise ShapeError(f"{op}: x must be a [N, C, H, W] tensor, got {getattr(x, 'shape', x)}")
    if not isinstance(boxes, Tensor) or boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ShapeError(
            f"{op}: boxes must be a [R, 4] tensor of (x1, y1, x2, y2), got {getattr(boxes, 'shape', boxes)}"
        )
    check_float(op, "x", x)
    check_float(op, "boxes", boxes)
    if boxes_num is None:
        if x.shape[0] != 1:
            raise ShapeError(f"{op}: boxes_num (the number of boxes of each of the {x.shape[0]} images) is required")
        return arange(boxes.shape[0], dtype="int64") * 0
    if not isinstance(boxes_num, Tensor) or tuple(boxes_num.shape) != (x.shape[0],):
        raise ShapeError(
            f"{op}: boxes_num must be a [{x.shape[0]}] tensor (boxes per image), got {getattr(boxes_num, 'shape', boxes_num)}"
        )
    check_int(op, "boxes_num", boxes_num, "cast it with .astype('int32')")
    ends = unsqueeze(cumsum(boxes_num.astype("int64")), 0)
    return reduce_sum((unsqueeze(arange(boxes.shape[0], dtype="int64"), 1) >= ends).astype("int64"), axis=1)


def roi_align(x, boxes, boxes_num, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=True, name=None):
    """RoIAlign (Mask R-CNN): [R, C, ph, pw], each bin the average of bilinear samples of the box
    scaled by ``spatial_scale`` (``sampling_ratio`` per side, adaptive when <= 0); ``aligned`` shifts
    boxes by half a pixel. Differentiable in ``x``."""
    op = "roi_align"
    batch = _roi_inputs(op, x, boxes, boxes_num)
    return roi_align_op(
        x, boxes, batch, output_size=_pair(op, output_size), spatial_scale=float(spatial_scale),
        sampling_ratio=int(sampling_ratio), aligned=bool(aligned), mode="avg",
    )  # fmt: skip


def roi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """RoIPool (Fast R-CNN): [R, C, ph, pw], the maximum of each bin of the box rounded to pixels (0
    for an empty bin). A gather at the argmax, so it differentiates like one."""
    op = "roi_pool"
    batch = _roi_inputs(op, x, boxes, boxes_num)
    index = roi_pool_argmax_op(x, boxes, batch, output_size=_pair(op, output_size), spatial_scale=float(spatial_scale))
    picked = reshape(gather(reshape(x, [-1]), reshape(ew.clip(index, min=0), [-1])), index.shape)
    return ew.where(index >= 0, picked, 0.0)


def psroi_pool(x, boxes, boxes_num, output_size, spatial_scale=1.0, name=None):
    """Position-sensitive RoI pooling (R-FCN): [R, C / (ph * pw), ph, pw], bin (i, j) of output
    channel ``o`` the average of input channel ``(o * ph + i) * pw + j`` over the bin."""
    op = "psroi_pool"
    batch = _roi_inputs(op, x, boxes, boxes_num)
    return psroi_pool_op(x, boxes, batch, output_size=_pair(op, output_size), spatial_scale=float(spatial_scale))


class RoIAlign(nn.Layer):
    """``roi_align`` with its output size and scale fixed."""

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num, aligned=True):
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale, aligned=aligned)


class RoIPool(nn.Layer):
    """``roi_pool`` with its output size and scale fixed."""

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num):
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)


class PSRoIPool(nn.Layer):
    """``psroi_pool`` with its output size and scale fixed."""

    def __init__(self, output_size, spatial_scale=1.0):
        super().__init__()
        self._output_size, self._spatial_scale = output_size, spatial_scale

    def forward(self, x, boxes, boxes_num):
        return psroi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)


def _two(op: str, name: str, value, least: int) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= least for v in pair):
        raise ShapeError(f"{op}: {name} must be an int >= {least} or a pair of them, got {value!r}")
    return pair


def deform_conv2d(
    x, offset, weight, bias=None, stride=1, padding=0, dilation=1, deformable_groups=1, groups=1, mask=None, name=None
):
    """Deformable convolution: v1 (``mask`` None) or v2 (modulated by ``mask``). ``offset``
    [N, 2 * deformable_groups * kh * kw, Ho, Wo] moves each tap by (dy, dx); ``mask``
    [N, deformable_groups * kh * kw, Ho, Wo] scales its sample. Differentiable in every input."""
    op = "deform_conv2d"
    stride, padding, dilation = (
        _two(op, "stride", stride, 1), _two(op, "padding", padding, 0), _two(op, "dilation", dilation, 1)
    )  # fmt: skip
    for what, t, rank in (("x", x, 4), ("offset", offset, 4), ("weight", weight, 4), ("mask", mask, 4)):
        if t is None and what == "mask":
            continue
        if not isinstance(t, Tensor) or t.ndim != rank:
            raise ShapeError(f"{op}: {what} must be a {rank}-D tensor, got {getattr(t, 'shape', t)}")
        check_float(op, what, t)
    n, c, h, w = x.shape
    out_channels, per_group, kh, kw = weight.shape
    groups, deformable_groups = int(groups), int(deformable_groups)
    if groups < 1 or c != per_group * groups or out_channels % groups:
        raise ShapeError(
            f"{op}: weight {weight.shape} must be [O, C / groups, kh, kw] with O divisible by groups={groups} "
            f"for x with C={c}"
        )
    if deformable_groups < 1 or c % deformable_groups:
        raise ShapeError(f"{op}: deformable_groups={deformable_groups} must divide the input's {c} channels")
    ho = (h + 2 * padding[0] - (dilation[0] * (kh - 1) + 1)) // stride[0] + 1
    wo = (w + 2 * padding[1] - (dilation[1] * (kw - 1) + 1)) // stride[1] + 1
    want = [n, 2 * deformable_groups * kh * kw, ho, wo]
    if list(offset.shape) != want:
        raise ShapeError(
            f"{op}: offset must be {want} (N, 2 * deformable_groups * kh * kw, Ho, Wo), got {offset.shape}"
        )
    if mask is not None and list(mask.shape) != [n, deformable_groups * kh * kw, ho, wo]:
        raise ShapeError(f"{op}: mask must be {[n, deformable_groups * kh * kw, ho, wo]}, got {mask.shape}")
    out = deform_conv2d_columns(
        x, offset, weight, mask, stride=stride, padding=padding, dilation=dilation,
        deformable_groups=deformable_groups, groups=groups,
    )  # fmt: skip
    return out if bias is None else out + reshape(bias, [1, -1, 1, 1])


class DeformConv2D(nn.Layer):
    """``deform_conv2d`` with its weight ([O, C / groups, kh, kw], normal with std sqrt(2 / (kh * kw * C))
    as in Paddle) and bias (zeros) as parameters; ``forward(x, offset, mask=None)``."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, deformable_groups=1, groups=1,
        weight_attr=None, bias_attr=None,
    ):  # fmt: skip
        super().__init__()
        op = "DeformConv2D"
        if in_channels % groups:
            raise ShapeError(f"{op}: in_channels={in_channels} must be divisible by groups={groups}")
        kernel = _two(op, "kernel_size", kernel_size, 1)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._deformable_groups, self._groups = deformable_groups, groups
        std = (2.0 / (kernel[0] * kernel[1] * in_channels)) ** 0.5
        self.weight = self.create_parameter(
            [out_channels, in_channels // groups, *kernel],
            weight_attr,
            default_initializer=nn.initializer.Normal(0.0, std),
        )
        self.bias = self.create_parameter([out_channels], bias_attr, is_bias=True)

    def forward(self, x, offset, mask=None):
        return deform_conv2d(
            x, offset, self.weight, self.bias, self._stride, self._padding, self._dilation, self._deformable_groups,
            self._groups, mask,
        )  # fmt: skip


def _floats(op: str, name: str, value) -> tuple:
    values = value if isinstance(value, list | tuple) else [value]
    try:
        return tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ShapeError(f"{op}: {name} must be a number or a list of numbers, got {value!r}") from None


def prior_box(
    input, image, min_sizes, max_sizes=None, aspect_ratios=(1.0,), variance=(0.1, 0.1, 0.2, 0.2), flip=False,
    clip=False, steps=(0.0, 0.0), offset=0.5, min_max_aspect_ratios_order=False, name=None,
):  # fmt: skip
    """SSD's prior boxes ``(boxes, variances)``, each [H, W, P, 4] for the feature map ``input``
    [N, C, H, W] over ``image`` [N, C, Hi, Wi]: per cell, for each min size its aspect ratios (1
    first, each ratio's inverse too with ``flip``) and the geometric mean with its max size."""
    op = "prior_box"
    for what, t in (("input", input), ("image", image)):
        if not isinstance(t, Tensor) or t.ndim != 4:
            raise ShapeError(f"{op}: {what} must be a [N, C, H, W] tensor, got {getattr(t, 'shape', t)}")
    min_sizes = _floats(op, "min_sizes", min_sizes)
    max_sizes = _floats(op, "max_sizes", max_sizes) if max_sizes not in (None, [], ()) else ()
    if max_sizes and max_sizes[0] <= 0:
        max_sizes = ()
    if max_sizes and len(max_sizes) != len(min_sizes):
        raise ShapeError(f"{op}: max_sizes must pair with min_sizes ({len(min_sizes)}), got {len(max_sizes)}")
    steps = _floats(op, "steps", steps)
    variance = _floats(op, "variance", variance)
    if len(steps) != 2 or len(variance) != 4:
        raise ShapeError(f"{op}: steps must be (step_w, step_h) and variance 4 numbers, got {steps}, {variance}")
    return prior_box_op(
        input, image, min_sizes=min_sizes, max_sizes=max_sizes,
        aspect_ratios=expand_aspect_ratios(_floats(op, "aspect_ratios", aspect_ratios), bool(flip)),
        variances=variance, clip=bool(clip), steps=steps, offset=float(offset),
        min_max_order=bool(min_max_aspect_ratios_order),
    )  # fmt: skip


def yolo_box(
    x, img_size, anchors, class_num, conf_thresh, downsample_ratio, clip_bbox=True, name=None, scale_x_y=1.0,
    iou_aware=False, iou_aware_factor=0.5,
):  # fmt: skip
    """YOLOv3's decoding of a head ``x`` [N, A * (5 + class_num), H, W] (an extra A IoU channels
    first with ``iou_aware``): ``(boxes [N, A*H*W, 4], scores [N, A*H*W, class_num])`` in the
    pixels of each image ``img_size`` [N, 2] (h, w); boxes under ``conf_thresh`` are zeros."""
    op = "yolo_box"
    if not isinstance(x, Tensor) or x.ndim != 4:
        raise ShapeError(f"{op}: x must be a [N, C, H, W] tensor, got {getattr(x, 'shape', x)}")
    check_float(op, "x", x)
    if not isinstance(img_size, Tensor) or tuple(img_size.shape) != (x.shape[0], 2):
        raise ShapeError(
            f"{op}: img_size must be a [{x.shape[0]}, 2] tensor of (h, w), got {getattr(img_size, 'shape', img_size)}"
        )
    check_int(op, "img_size", img_size, "cast it with .astype('int32')")
    anchors = tuple(int(a) for a in anchors)
    if not anchors or len(anchors) % 2:
        raise ShapeError(f"{op}: anchors must be (w, h) pairs, got {list(anchors)}")
    return yolo_box_op(
        x, img_size, anchors=anchors, class_num=int(class_num), conf_thresh=float(conf_thresh),
        downsample_ratio=int(downsample_ratio), clip_bbox=bool(clip_bbox), scale_x_y=float(scale_x_y),
        iou_aware=bool(iou_aware), iou_aware_factor=float(iou_aware_factor),
    )  # fmt: skip


def yolo_loss(
    x, gt_box, gt_label, anchors, anchor_mask, class_num, ignore_thresh, downsample_ratio, gt_score=None,
    use_label_smooth=True, name=None, scale_x_y=1.0,
):  # fmt: skip
    """YOLOv3's loss per image [N] for a head ``x`` [N, len(anchor_mask) * (5 + class_num), H, W] and
    ground truths ``gt_box`` [N, B, 4] (centre x, y, w, h over the image size; zero-sized ones are
    padding) of classes ``gt_label`` [N, B]: sigmoid cross-entropy of the centre offsets, L1 of the
    log sizes (weighted 2 - w h), the classes (smoothed with ``use_label_smooth``) and the
    objectness, each truth weighted by ``gt_score``. Differentiable in ``x``."""
    op = "yolo_loss"
    if not isinstance(x, Tensor) or x.ndim != 4:
        raise ShapeError(f"{op}: x must be a [N, C, H, W] tensor, got {getattr(x, 'shape', x)}")
    check_float(op, "x", x)
    n = x.shape[0]
    if not isinstance(gt_box, Tensor) or gt_box.ndim != 3 or gt_box.shape[0] != n or gt_box.shape[2] != 4:
        raise ShapeError(f"{op}: gt_box must be a [{n}, B, 4] tensor, got {getattr(gt_box, 'shape', gt_box)}")
    boxes = gt_box.shape[1]
    if not isinstance(gt_label, Tensor) or list(gt_label.shape) != [n, boxes]:
        raise ShapeError(f"{op}: gt_label must be a [{n}, {boxes}] tensor, got {getattr(gt_label, 'shape', gt_label)}")
    check_int(op, "gt_label", gt_label, "cast it with .astype('int32')")
    if gt_score is None:
        gt_score = ones_like(gt_label, dtype=x.dtype)
    anchors, anchor_mask = tuple(int(a) for a in anchors), tuple(int(a) for a in anchor_mask)
    if len(anchors) % 2 or not anchor_mask or not all(0 <= a < len(anchors) // 2 for a in anchor_mask):
        raise ShapeError(
            f"{op}: anchors must be (w, h) pairs and anchor_mask indices of them, got {anchors}, {anchor_mask}"
        )
    index, target, weight, labels, positive, negative = yolo_targets_op(
        x, gt_box, gt_label, gt_score, anchors=anchors, anchor_mask=anchor_mask, class_num=int(class_num),
        ignore_thresh=float(ignore_thresh), downsample_ratio=int(downsample_ratio), scale_x_y=float(scale_x_y),
        use_label_smooth=bool(use_label_smooth),
    )  # fmt: skip
    entries = 5 + int(class_num)
    picked = reshape(take_along_axis(reshape(x, [n, -1]), reshape(index, [n, -1]), axis=1), [n, boxes, entries])

    def sce(logit, label):
        return binary_cross_entropy_with_logits(logit, label, reduction="none")

    absolute = ew.UNARY["abs"]
    location = (
        sce(picked[..., 0], target[..., 0]) + sce(picked[..., 1], target[..., 1])
        + absolute(picked[..., 2] - target[..., 2]) + absolute(picked[..., 3] - target[..., 3])
    )  # fmt: skip
    classes = reduce_sum(sce(picked[..., 5:], labels), axis=-1)
    per_truth = reduce_sum(location * weight[..., 0] + classes * weight[..., 1], axis=1)
    objectness = reshape(x, [n, len(anchor_mask), entries, *x.shape[2:]])[:, :, 4]
    obj = sce(objectness, ones_like(positive)) * positive + sce(objectness, zeros_like(positive)) * negative
    return per_truth + reduce_sum(reshape(obj, [n, -1]), axis=1)


def distribute_fpn_proposals(
    fpn_rois, min_level, max_level, refer_level, refer_scale, pixel_offset=False, rois_num=None, name=None
):
    """FPN's assignment of RoIs [R, 4] to levels ``min_level..max_level`` by size:
    ``(multi_rois, restore_ind, rois_num_per_level)``, a list of each level's RoIs, [R, 1] int32
    positions restoring the original order from their concatenation, and each level's [N] counts."""
    op = "distribute_fpn_proposals"
    if not 0 < min_level < max_level or max_level - min_level + 1 >= 100:
        raise ShapeError(f"{op}: need 0 < min_level < max_level with under 100 levels, got {min_level}, {max_level}")
    if not isinstance(fpn_rois, Tensor) or fpn_rois.ndim != 2 or fpn_rois.shape[1] != 4:
        raise ShapeError(f"{op}: fpn_rois must be a [R, 4] tensor, got {getattr(fpn_rois, 'shape', fpn_rois)}")
    check_float(op, "fpn_rois", fpn_rois)
    if not isinstance(rois_num, Tensor) or rois_num.ndim != 1:
        raise ShapeError(f"{op}: rois_num (the RoIs of each image, a 1-D int tensor) is required")
    check_int(op, "rois_num", rois_num, "cast it with .astype('int32')")
    outs = distribute_fpn_proposals_op(
        fpn_rois, rois_num, min_level=int(min_level), max_level=int(max_level), refer_level=int(refer_level),
        refer_scale=float(refer_scale), pixel_offset=bool(pixel_offset),
    )  # fmt: skip
    levels = max_level - min_level + 1
    return list(outs[:levels]), outs[levels], list(outs[levels + 1 :])


def generate_proposals(
    scores, bbox_deltas, img_size, anchors, variances, pre_nms_top_n=6000, post_nms_top_n=1000, nms_thresh=0.5,
    min_size=0.1, eta=1.0, pixel_offset=False, return_rois_num=False, name=None,
):  # fmt: skip
    """Faster R-CNN's RPN proposals from ``scores`` [N, A, H, W] and ``bbox_deltas`` [N, 4A, H, W]
    over ``anchors``/``variances`` [H, W, A, 4]: ``(rois [K, 4], roi_probs [K, 1], rois_num [N])``
    (``rois_num`` None unless ``return_rois_num``)."""
    op = "generate_proposals"
    if not isinstance(scores, Tensor) or scores.ndim != 4:
        raise ShapeError(f"{op}: scores must be a [N, A, H, W] tensor, got {getattr(scores, 'shape', scores)}")
    n, a, h, w = scores.shape
    for what, t, shape in (("bbox_deltas", bbox_deltas, [n, 4 * a, h, w]), ("img_size", img_size, [n, 2])):
        if not isinstance(t, Tensor) or list(t.shape) != shape:
            raise ShapeError(f"{op}: {what} must be {shape}, got {getattr(t, 'shape', t)}")
    for what, t in (("anchors", anchors), ("variances", variances)):
        if not isinstance(t, Tensor) or t.shape[-1:] != [4]:
            raise ShapeError(f"{op}: {what} must be a [H, W, A, 4] tensor, got {getattr(t, 'shape', t)}")
    for what, t in (("scores", scores), ("bbox_deltas", bbox_deltas), ("anchors", anchors), ("variances", variances)):
        check_float(op, what, t)
    rois, probs, counts = generate_proposals_op(
        scores, bbox_deltas, img_size, anchors, variances, pre_nms_top_n=int(pre_nms_top_n),
        post_nms_top_n=int(post_nms_top_n), nms_thresh=float(nms_thresh), min_size=float(min_size), eta=float(eta),
        pixel_offset=bool(pixel_offset),
    )  # fmt: skip
    return rois, probs, (counts if return_rois_num else None)


def matrix_nms(
    bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian=False, gaussian_sigma=2.0,
    background_label=0, normalized=True, return_index=False, return_rois_num=True, name=None,
):  # fmt: skip
    """SOLOv2's Matrix NMS over ``bboxes`` [N, M, 4] and ``scores`` [N, C, M]: per class, candidates
    over ``score_threshold`` (best ``nms_top_k``) have their scores decayed by their overlap with
    better boxes (linearly, or Gaussian with ``use_gaussian``); those over ``post_threshold`` are
    kept, the best ``keep_top_k`` per image. Returns ``(out [K, 6], rois_num, index)`` as
    ``multiclass_nms``, rows best first."""
    op = "matrix_nms"
    if not isinstance(bboxes, Tensor) or bboxes.ndim != 3 or bboxes.shape[2] != 4:
        raise ShapeError(f"{op}: bboxes must be a [N, M, 4] tensor, got {getattr(bboxes, 'shape', bboxes)}")
    if not isinstance(scores, Tensor) or scores.ndim != 3 or [scores.shape[0], scores.shape[2]] != bboxes.shape[:2]:
        raise ShapeError(
            f"{op}: scores must be [N, C, M] with N, M as in bboxes {bboxes.shape}, got {getattr(scores, 'shape', scores)}"
        )
    check_float(op, "bboxes", bboxes)
    check_float(op, "scores", scores)
    out, index, counts = matrix_nms_op(
        bboxes, scores, score_threshold=float(score_threshold), post_threshold=float(post_threshold),
        nms_top_k=int(nms_top_k), keep_top_k=int(keep_top_k), use_gaussian=bool(use_gaussian),
        gaussian_sigma=float(gaussian_sigma), background_label=int(background_label), normalized=bool(normalized),
    )  # fmt: skip
    return out, (counts if return_rois_num else None), (index if return_index else None)


def read_file(filename, name=None):
    """The bytes of a file as a 1-D uint8 tensor (``decode_jpeg``'s input)."""
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DataError(f"read_file: cannot read {filename!r}: {exc.strerror}") from None
    return constant(np.frombuffer(data, np.uint8).copy())


def decode_jpeg(x, mode="unchanged", name=None):
    """A JPEG's bytes (``read_file``'s 1-D uint8 tensor) as a [C, H, W] uint8 image: RGB, or one
    channel with ``mode='gray'`` (``'unchanged'`` keeps the file's channels)."""
    op = "decode_jpeg"
    if mode not in ("unchanged", "gray", "rgb"):
        raise ShapeError(f"{op}: mode must be 'unchanged', 'gray' or 'rgb', got {mode!r}")
    if not isinstance(x, Tensor) or x.ndim != 1 or x.dtype != np.uint8:
        raise ShapeError(
            f"{op}: x must be a 1-D uint8 tensor of the file's bytes (read_file's), got {getattr(x, 'shape', x)}"
        )
    return decode_jpeg_op(x, mode=mode)


__all__ = [
    "DeformConv2D",
    "PSRoIPool",
    "RoIAlign",
    "RoIPool",
    "box_coder",
    "decode_jpeg",
    "deform_conv2d",
    "distribute_fpn_proposals",
    "generate_proposals",
    "matrix_nms",
    "multiclass_nms",
    "nms",
    "prior_box",
    "psroi_pool",
    "read_file",
    "roi_align",
    "roi_pool",
    "yolo_box",
    "yolo_loss",
]
