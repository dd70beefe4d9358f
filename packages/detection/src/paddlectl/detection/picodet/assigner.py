"""Task-aligned assignment (TOOD), as PP-PicoDet v2 and PP-YOLOE assign: which anchor points learn
which object, and with what target score.

Run in NumPy on detached predictions: it picks targets, it is not differentiated. For object
``j`` and a point ``i`` inside its box the alignment is ``score_ij ** alpha * IoU_ij ** beta``
(the predicted score of ``j``'s class and the IoU of the predicted box); each object takes its
``topk`` best-aligned points, a point claimed twice goes to the object it overlaps most, and the
target score is the alignment normalised so each object's best point gets that point's IoU.

The whole batch is assigned at once: objects are the rows of the padded label tables, ``valid``
says which are real (padding and crowd rows are not), and every step is one array operation over
``[images, objects, points]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-9


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU ``[..., len(a), len(b)]`` of x1y1x2y2 boxes ``a`` [..., M, 4] and ``b`` [..., A, 4]
    (coordinate by coordinate: NumPy is slow on a 2-long last axis)."""
    ax1, ay1, ax2, ay2 = (a[..., :, None, i] for i in range(4))
    bx1, by1, bx2, by2 = (b[..., None, :, i] for i in range(4))
    inter = np.clip(np.minimum(ax2, bx2) - np.maximum(ax1, bx1), 0, None) * np.clip(
        np.minimum(ay2, by2) - np.maximum(ay1, by1), 0, None
    )
    area_a = np.clip(ax2 - ax1, 0, None) * np.clip(ay2 - ay1, 0, None)
    area_b = np.clip(bx2 - bx1, 0, None) * np.clip(by2 - by1, 0, None)
    return inter / (area_a + area_b - inter + EPS)


@dataclass
class Assignment:
    """Per image and point: the object row it learns (-1: background) and its target score (0 for background)."""

    gt_index: np.ndarray  # [N, A] int
    score: np.ndarray  # [N, A] float


class TaskAlignedAssigner:
    def __init__(self, topk: int = 13, alpha: float = 1.0, beta: float = 6.0) -> None:
        self.topk, self.alpha, self.beta = int(topk), float(alpha), float(beta)

    def __call__(self, scores, boxes, points, gt_boxes, gt_classes, valid=None) -> Assignment:
        """``scores`` [N, A, C] (probabilities), ``boxes`` [N, A, 4], ``points`` [A, 2]; ``gt_boxes``
        [N, M, 4], ``gt_classes`` [N, M] and ``valid`` [N, M] (all rows real when None)."""
        n, count = scores.shape[:2]
        gt_index, target = np.full((n, count), -1), np.zeros((n, count), np.float32)
        valid = np.ones(gt_classes.shape, bool) if valid is None else valid
        if not valid.any():
            return Assignment(gt_index, target)
        iou = box_iou(gt_boxes, boxes)  # [N, M, A]
        x, y = points[:, 0], points[:, 1]
        inside = (
            (x > gt_boxes[..., 0, None])
            & (x < gt_boxes[..., 2, None])
            & (y > gt_boxes[..., 1, None])
            & (y < gt_boxes[..., 3, None])
            & valid[..., None]
        )
        class_scores = np.take_along_axis(scores, np.where(valid, gt_classes, 0)[:, None, :], 2).transpose(0, 2, 1)
        align = class_scores**self.alpha * iou**self.beta * inside
        k = min(self.topk, count)
        top = np.argpartition(-align, k - 1, axis=-1)[..., :k]
        chosen = np.zeros_like(inside)
        np.put_along_axis(chosen, top, True, axis=-1)
        chosen &= inside & (align > 0)
        # an object smaller than a stride holds no point inside: give it the nearest point (never unlearnt)
        centres = (gt_boxes[..., :2] + gt_boxes[..., 2:]) / 2
        image, row = np.nonzero(valid & ~chosen.any(-1))
        nearest = (((points[None] - centres[image, row][:, None]) ** 2).sum(-1)).argmin(-1)
        chosen[image, row, nearest] = True
        claimed = chosen.any(1)  # [N, A]
        owner = np.where(chosen, iou, -1.0).argmax(1)
        gt_index[claimed] = owner[claimed]
        mine = chosen & (np.arange(chosen.shape[1])[None, :, None] == owner[:, None, :]) & claimed[:, None, :]
        align = np.where(mine, align, 0.0)
        best_align = align.max(-1, keepdims=True)
        best_iou = np.where(mine, iou, 0.0).max(-1, keepdims=True)
        normalised = align / (best_align + EPS) * best_iou
        target[claimed] = normalised.max(1)[claimed]
        return Assignment(gt_index, target)
