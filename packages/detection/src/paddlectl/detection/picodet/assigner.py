"""Task-aligned assignment (TOOD), as PP-PicoDet v2 and PP-YOLOE assign: which anchor points learn
which object, and with what target score.

Run in NumPy on detached predictions: it picks targets, it is not differentiated. For object
``j`` and a point ``i`` inside its box the alignment is ``score_ij ** alpha * IoU_ij ** beta``
(the predicted score of ``j``'s class and the IoU of the predicted box); each object takes its
``topk`` best-aligned points, a point claimed twice goes to the object it overlaps most, and the
target score is the alignment normalised so each object's best point gets that point's IoU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-9


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU ``[len(a), len(b)]`` of x1y1x2y2 boxes."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), -1)
    area_a = np.prod(np.clip(a[:, 2:] - a[:, :2], 0, None), -1)
    area_b = np.prod(np.clip(b[:, 2:] - b[:, :2], 0, None), -1)
    return inter / (area_a[:, None] + area_b[None, :] - inter + EPS)


@dataclass
class Assignment:
    """Per point: the object index it learns (-1: background) and its target score (0 for background)."""

    gt_index: np.ndarray  # [A] int
    score: np.ndarray  # [A] float


class TaskAlignedAssigner:
    def __init__(self, topk: int = 13, alpha: float = 1.0, beta: float = 6.0) -> None:
        self.topk, self.alpha, self.beta = int(topk), float(alpha), float(beta)

    def __call__(self, scores, boxes, points, gt_boxes, gt_classes) -> Assignment:
        """``scores`` [A, C] (probabilities), ``boxes`` [A, 4], ``points`` [A, 2]; ``gt_*`` of one image."""
        count = len(points)
        gt_index, target = np.full(count, -1), np.zeros(count, np.float32)
        if len(gt_boxes) == 0:
            return Assignment(gt_index, target)
        iou = box_iou(gt_boxes, boxes)  # [M, A]
        inside = (
            (points[None, :, 0] > gt_boxes[:, None, 0])
            & (points[None, :, 0] < gt_boxes[:, None, 2])
            & (points[None, :, 1] > gt_boxes[:, None, 1])
            & (points[None, :, 1] < gt_boxes[:, None, 3])
        )
        align = scores[:, gt_classes].T ** self.alpha * iou**self.beta * inside
        k = min(self.topk, count)
        top = np.argpartition(-align, k - 1, axis=1)[:, :k]
        chosen = np.zeros_like(inside)
        np.put_along_axis(chosen, top, True, axis=1)
        chosen &= inside & (align > 0)
        # an object smaller than a stride holds no point inside: give it the nearest point (never unlearnt)
        centres = (gt_boxes[:, :2] + gt_boxes[:, 2:]) / 2
        for j in np.flatnonzero(~chosen.any(1)):
            chosen[j, np.argmin(((points - centres[j]) ** 2).sum(1))] = True
        claimed = chosen.any(0)
        owner = np.where(chosen, iou, -1.0).argmax(0)
        gt_index[claimed] = owner[claimed]
        mine = chosen & (np.arange(len(gt_boxes))[:, None] == owner[None, :])
        mine &= claimed[None, :]
        align = np.where(mine, align, 0.0)
        best_align = align.max(1, keepdims=True)
        best_iou = np.where(mine, iou, 0.0).max(1, keepdims=True)
        normalised = align / (best_align + EPS) * best_iou
        target[claimed] = normalised.max(0)[claimed]
        return Assignment(gt_index, target)
