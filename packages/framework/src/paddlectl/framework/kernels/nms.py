"""Greedy non-maximum suppression, as Paddle's ``nms`` and ``multiclass_nms3`` kernels do it.

Both walk candidates in score order and keep one unless it overlaps a kept box of its class by
more than the IoU threshold. ``greedy_nms`` is ``paddle.vision.ops.nms``'s kernel (plain areas,
classes optional); ``multiclass_nms`` is PaddleDetection's post-process (score threshold, top-k
before and after, ``normalized`` areas or pixel areas with +1, and ``nms_eta``'s shrinking threshold).
"""

import numpy as np

from . import njit


@njit(cache=True, inline="always")
def _iou(boxes, i, j, plus):
    """PaddleDetection's JaccardOverlap: 0 for disjoint boxes, an inverted box has area 0; ``plus``
    is 1 for pixel boxes (``normalized=False``), else 0."""
    ax1, ay1, ax2, ay2 = boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3]
    bx1, by1, bx2, by2 = boxes[j, 0], boxes[j, 1], boxes[j, 2], boxes[j, 3]
    if bx1 > ax2 or bx2 < ax1 or by1 > ay2 or by2 < ay1:
        return 0.0
    iw = min(ax2, bx2) - max(ax1, bx1) + plus
    ih = min(ay2, by2) - max(ay1, by1) + plus
    inter = iw * ih
    area_a = 0.0 if ax2 < ax1 or ay2 < ay1 else (ax2 - ax1 + plus) * (ay2 - ay1 + plus)
    area_b = 0.0 if bx2 < bx1 or by2 < by1 else (bx2 - bx1 + plus) * (by2 - by1 + plus)
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


@njit(cache=True, inline="always")
def _plain_iou(boxes, i, j):
    """``paddle.vision.ops.nms``'s IoU: the overlap clamped at 0, each area as given (not clamped)."""
    iw = max(min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]), 0.0)
    ih = max(min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]), 0.0)
    inter = iw * ih
    area_i = (boxes[i, 2] - boxes[i, 0]) * (boxes[i, 3] - boxes[i, 1])
    area_j = (boxes[j, 2] - boxes[j, 0]) * (boxes[j, 3] - boxes[j, 1])
    return inter / (area_i + area_j - inter)


@njit(cache=True)
def greedy_nms(boxes, classes, threshold):
    """Positions (into ``boxes``, already in score order) of the boxes kept: a box is dropped when a
    kept box of the same class overlaps it by IoU > ``threshold``."""
    n = boxes.shape[0]
    dropped = np.zeros(n, dtype=np.bool_)
    kept = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        if dropped[i]:
            continue
        kept[count] = i
        count += 1
        for j in range(i + 1, n):
            if not dropped[j] and classes[j] == classes[i] and _plain_iou(boxes, i, j) > threshold:
                dropped[j] = True
    return kept[:count]


@njit(cache=True)
def _class_nms(boxes, scores, score_threshold, top_k, threshold, plus, eta, out):
    """One class of one image (PaddleDetection's NMSFast): candidates over ``score_threshold`` in
    stable descending score order, the first ``top_k`` (all when < 0), kept greedily into ``out``;
    returns how many."""
    candidates = np.nonzero(scores > score_threshold)[0]
    order = candidates[np.argsort(-scores[candidates], kind="mergesort")]
    if top_k > -1 and order.shape[0] > top_k:
        order = order[:top_k]
    count = 0
    adaptive = threshold
    for idx in order:
        keep = True
        for k in range(count):
            if _iou(boxes, idx, out[k], plus) > adaptive:
                keep = False
                break
        if keep:
            out[count] = idx
            count += 1
            if eta < 1.0 and adaptive > 0.5:
                adaptive *= eta
    return count


@njit(cache=True)
def multiclass_nms(bboxes, scores, score_threshold, nms_top_k, keep_top_k, threshold, normalized, eta, background):
    """Every image's detections as rows (class, score, x1, y1, x2, y2), grouped by class in class
    order and by score within a class, their box indices (image offset included) and the count per
    image. ``bboxes`` [N, M, 4], ``scores`` [N, C, M]."""
    batch, classes, m = scores.shape
    plus = 0.0 if normalized else 1.0
    rows = np.empty((batch * classes * m, 6), dtype=bboxes.dtype)
    index = np.empty(batch * classes * m, dtype=np.int32)
    counts = np.zeros(batch, dtype=np.int32)
    picked = np.empty((classes, m), dtype=np.int64)
    found = np.zeros(classes, dtype=np.int64)
    total = 0
    for b in range(batch):
        boxes = bboxes[b]
        num = 0
        for c in range(classes):
            found[c] = 0
            if c != background:
                found[c] = _class_nms(boxes, scores[b, c], score_threshold, nms_top_k, threshold, plus, eta, picked[c])
                num += found[c]
        if keep_top_k > -1 and num > keep_top_k:
            # the keep_top_k best over all classes, then regrouped by class (scores stay sorted within one)
            flat_score = np.empty(num, dtype=scores.dtype)
            flat_class = np.empty(num, dtype=np.int64)
            flat_idx = np.empty(num, dtype=np.int64)
            k = 0
            for c in range(classes):
                for t in range(found[c]):
                    flat_score[k], flat_class[k], flat_idx[k] = scores[b, c, picked[c, t]], c, picked[c, t]
                    k += 1
            best = np.argsort(-flat_score, kind="mergesort")[:keep_top_k]
            found[:] = 0
            for t in best:
                c = flat_class[t]
                picked[c, found[c]] = flat_idx[t]
                found[c] += 1
            num = keep_top_k
        for c in range(classes):
            for t in range(found[c]):
                idx = picked[c, t]
                rows[total, 0] = c
                rows[total, 1] = scores[b, c, idx]
                rows[total, 2:] = boxes[idx]
                index[total] = b * m + idx
                total += 1
        counts[b] = num
    return rows[:total].copy(), index[:total].copy(), counts
