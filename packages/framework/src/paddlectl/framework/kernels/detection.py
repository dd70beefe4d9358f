"""Two-stage and anchor-free detectors' selection kernels, as Paddle's CPU kernels do them:
``matrix_nms`` (SOLOv2's Matrix NMS: scores decayed by overlap with better boxes, nothing removed
by a hard threshold) and ``generate_proposals`` (Faster R-CNN's RPN: decode anchors, clip, drop
small boxes, NMS). Both walk boxes best first; the IoU is PaddleDetection's (``nms._iou``).
"""

import math

import numpy as np

from . import njit
from .nms import _class_nms, _iou


@njit(cache=True)
def _matrix_nms_class(boxes, scores, score_threshold, post_threshold, top_k, gaussian, sigma, plus):
    """One class of one image: (box indices, decayed scores) of the candidates over
    ``score_threshold`` (best ``top_k``) whose score, decayed by the worst ratio over better boxes,
    stays over ``post_threshold``."""
    candidates = np.nonzero(scores > score_threshold)[0]
    order = candidates[np.argsort(-scores[candidates], kind="mergesort")]
    if top_k > -1 and order.shape[0] > top_k:
        order = order[:top_k]
    n = order.shape[0]
    iou = np.zeros((n, n))
    iou_max = np.zeros(n)
    for i in range(n):
        for j in range(i):
            iou[i, j] = _iou(boxes, order[i], order[j], plus)
            iou_max[i] = max(iou_max[i], iou[i, j])
    kept = np.empty(n, np.int64)
    decayed = np.empty(n, scores.dtype)
    count = 0
    for i in range(n):
        decay = 1.0
        for j in range(i):
            if gaussian:
                d = math.exp((iou_max[j] * iou_max[j] - iou[i, j] * iou[i, j]) * sigma)
            else:
                d = (1.0 - iou[i, j]) / (1.0 - iou_max[j])
            decay = min(decay, d)
        s = decay * scores[order[i]]
        if s > post_threshold:
            kept[count], decayed[count] = order[i], s
            count += 1
    return kept[:count], decayed[:count]


@njit(cache=True)
def matrix_nms(bboxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k, gaussian, sigma, background,
               normalized):  # fmt: skip
    """Rows (class, decayed score, x1, y1, x2, y2) of every image, best first (the best
    ``keep_top_k`` when > -1), their box indices (image offset included) and the count per image."""
    batch, classes, m = scores.shape
    plus = 0.0 if normalized else 1.0
    rows = np.empty((batch * classes * m, 6), bboxes.dtype)
    index = np.empty(batch * classes * m, np.int32)
    counts = np.zeros(batch, np.int32)
    total = 0
    for b in range(batch):
        idx = np.empty(classes * m, np.int64)
        cls = np.empty(classes * m, np.int64)
        sc = np.empty(classes * m, scores.dtype)
        num = 0
        for c in range(classes):
            if c == background:
                continue
            kept, decayed = _matrix_nms_class(
                bboxes[b], scores[b, c], score_threshold, post_threshold, nms_top_k, gaussian, sigma, plus
            )
            for t in range(kept.shape[0]):
                idx[num], cls[num], sc[num] = kept[t], c, decayed[t]
                num += 1
        order = np.argsort(-sc[:num], kind="mergesort")
        if keep_top_k > -1 and num > keep_top_k:
            order = order[:keep_top_k]
        for t in order:
            rows[total, 0] = cls[t]
            rows[total, 1] = sc[t]
            rows[total, 2:] = bboxes[b, idx[t]]
            index[total] = b * m + idx[t]
            total += 1
        counts[b] = order.shape[0]
    return rows[:total].copy(), index[:total].copy(), counts


BBOX_CLIP = math.log(1000.0 / 16.0)
"""Paddle's ``kBBoxClipDefault``: the largest log size ratio a proposal's delta may ask for."""


@njit(cache=True)
def proposals(scores, deltas, anchors, variances, im_h, im_w, pre_top_n, post_top_n, nms_thresh, min_size, eta,
              pixel_offset):  # fmt: skip
    """One image's proposals (boxes [K, 4], scores [K]): the ``pre_top_n`` best anchors (all when
    <= 0) decoded by their deltas and variances, clipped to the image, those narrower or lower than
    ``min_size`` (at least 1) dropped, then greedy NMS and the first ``post_top_n``. Inputs are
    flattened in (H, W, A) order; no box left gives one zero box with score 0, as Paddle does."""
    off = 1.0 if pixel_offset else 0.0
    order = np.argsort(-scores, kind="mergesort")
    if 0 < pre_top_n < order.shape[0]:
        order = order[:pre_top_n]
    n = order.shape[0]
    boxes = np.empty((n, 4), scores.dtype)
    for t in range(n):
        a, d, v = anchors[order[t]], deltas[order[t]], variances[order[t]]
        aw, ah = a[2] - a[0] + off, a[3] - a[1] + off
        cx = v[0] * d[0] * aw + a[0] + 0.5 * aw
        cy = v[1] * d[1] * ah + a[1] + 0.5 * ah
        w = math.exp(min(v[2] * d[2], BBOX_CLIP)) * aw
        h = math.exp(min(v[3] * d[3], BBOX_CLIP)) * ah
        box = (cx - w / 2, cy - h / 2, cx + w / 2 - off, cy + h / 2 - off)
        limits = (im_w - off, im_h - off, im_w - off, im_h - off)
        for q in range(4):
            boxes[t, q] = max(min(box[q], limits[q]), 0.0)
    least = max(min_size, 1.0)
    keep = np.empty(n, np.int64)
    count = 0
    for t in range(n):
        ws, hs = boxes[t, 2] - boxes[t, 0] + off, boxes[t, 3] - boxes[t, 1] + off
        inside = True
        if pixel_offset:
            inside = boxes[t, 0] + ws / 2 <= im_w and boxes[t, 1] + hs / 2 <= im_h
        if ws >= least and hs >= least and inside:
            keep[count] = t
            count += 1
    if count == 0:
        return np.zeros((1, 4), scores.dtype), np.zeros(1, scores.dtype)
    boxes, kept_scores = boxes[keep[:count]], scores[order[keep[:count]]]
    if nms_thresh <= 0:
        return boxes, kept_scores
    picked = np.empty(count, np.int64)
    found = _class_nms(boxes, kept_scores, -np.inf, -1, nms_thresh, off, eta, picked)
    if 0 < post_top_n < found:
        found = post_top_n
    return boxes[picked[:found]], kept_scores[picked[:found]]


@njit(cache=True, inline="always")
def _centre_iou(ax, ay, aw, ah, bx, by, bw, bh):
    """IoU of two (centre x, centre y, w, h) boxes, as Paddle's ``CalcBoxIoU``."""
    iw = max(min(ax + aw / 2, bx + bw / 2) - max(ax - aw / 2, bx - bw / 2), 0.0)
    ih = max(min(ay + ah / 2, by + bh / 2) - max(ay - ah / 2, by - bh / 2), 0.0)
    inter = iw * ih
    return inter / (aw * ah + bw * bh - inter)


@njit(cache=True)
def yolo_targets(x, gt_box, gt_label, gt_score, anchors, anchor_mask, class_num, ignore_thresh, downsample, scale,
                 label_pos, label_neg):  # fmt: skip
    """What YOLOv3's loss compares ``x`` [N, M * (5 + classes), H, W] with, as Paddle's
    ``yolov3_loss`` kernel decides it: each valid ground truth (centre x, y, w, h in [0, 1]) goes to
    the anchor it overlaps best (shapes compared at the origin) in the cell holding its centre, if
    that anchor is one of ``anchor_mask``. Returns, per image and truth: the flat indices of its
    cell's 5 + classes entries in ``x[n]`` [N, B, 5 + classes] (0 when unmatched), the location
    targets (tx, ty, tw, th) [N, B, 4], the location weight (2 - w h) * score and the class weight
    (score) [N, B, 2] (0 when unmatched), the class targets [N, B, classes]; per predicted box, the
    objectness weights toward 1 (the score of the truth it holds) and toward 0 (1 unless it holds a
    truth or its predicted box overlaps a truth by more than ``ignore_thresh``) [N, M, H, W]."""
    n, _, h, w = x.shape
    m, b = anchor_mask.shape[0], gt_box.shape[1]
    entries = 5 + class_num
    size_h, size_w = downsample * h, downsample * w
    bias = -0.5 * (scale - 1.0)
    index = np.zeros((n, b, entries), np.int64)
    target = np.zeros((n, b, 4), x.dtype)
    weight = np.zeros((n, b, 2), x.dtype)
    labels = np.zeros((n, b, class_num), x.dtype)
    obj = np.zeros((n, m, h, w), x.dtype)
    for i in range(n):
        for j in range(m):
            an = anchor_mask[j]
            for k in range(h):
                for q in range(w):
                    base = j * entries
                    px = (q + 1.0 / (1.0 + math.exp(-x[i, base, k, q])) * scale + bias) / w
                    py = (k + 1.0 / (1.0 + math.exp(-x[i, base + 1, k, q])) * scale + bias) / h
                    pw = math.exp(x[i, base + 2, k, q]) * anchors[2 * an] / size_w
                    ph = math.exp(x[i, base + 3, k, q]) * anchors[2 * an + 1] / size_h
                    best = 0.0
                    for t in range(b):
                        g = gt_box[i, t]
                        if g[2] < 1e-6 or g[3] < 1e-6:
                            continue
                        best = max(best, _centre_iou(px, py, pw, ph, g[0], g[1], g[2], g[3]))
                    if best > ignore_thresh:
                        obj[i, j, k, q] = -1.0
        for t in range(b):
            g = gt_box[i, t]
            if g[2] < 1e-6 or g[3] < 1e-6:
                continue
            gi, gj = int(g[0] * w), int(g[1] * h)
            best, best_n = 0.0, 0
            for an in range(anchors.shape[0] // 2):
                iou = _centre_iou(
                    0.0, 0.0, anchors[2 * an] / size_w, anchors[2 * an + 1] / size_h, 0.0, 0.0, g[2], g[3]
                )
                if iou > best:
                    best, best_n = iou, an
            slot = -1
            for j in range(m):
                if anchor_mask[j] == best_n:
                    slot = j
            if slot < 0:
                continue
            score = gt_score[i, t]
            for e in range(entries):
                index[i, t, e] = ((slot * entries + e) * h + gj) * w + gi
            target[i, t, 0] = g[0] * w - gi
            target[i, t, 1] = g[1] * h - gj
            target[i, t, 2] = math.log(g[2] * size_w / anchors[2 * best_n])
            target[i, t, 3] = math.log(g[3] * size_h / anchors[2 * best_n + 1])
            weight[i, t, 0] = (2.0 - g[2] * g[3]) * score
            weight[i, t, 1] = score
            for c in range(class_num):
                labels[i, t, c] = label_pos if c == gt_label[i, t] else label_neg
            obj[i, slot, gj, gi] = score
    positive = np.where(obj > 1e-5, obj, 0.0).astype(x.dtype)
    negative = ((obj <= 1e-5) & (obj > -0.5)).astype(x.dtype)
    return index, target, weight, labels, positive, negative
