"""PicoDet's loss: VarifocalLoss on the class scores, GIoU and DFL on the boxes (PP-PicoDet v2).

Targets come from ``TaskAlignedAssigner`` on detached predictions (NumPy); the three terms are
computed with ops so they are differentiated, each normalised by the sum of target scores as
PaddleDetection normalises them. Box terms are weighted by each point's target score.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework import nn, no_grad, take_along_axis, to_tensor
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.nn import functional as F

from ..data.labels import objects, unpack
from .anchors import anchor_points, boxes_to_distances
from .assigner import TaskAlignedAssigner


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def decode_numpy(raw: np.ndarray, num_classes: int, reg_max: int, points, stride) -> tuple[np.ndarray, np.ndarray]:
    """``raw`` [..., A, K] (one image or a batch) -> ``(scores [..., A, C], boxes [..., A, 4])``: the
    head's decode, in NumPy."""
    scores = _sigmoid(raw[..., :num_classes])
    bins = raw[..., num_classes:].reshape(*raw.shape[:-1], 4, reg_max + 1)
    dist = _softmax(bins) @ np.arange(reg_max + 1, dtype=np.float32)
    dist = dist * stride[:, None]
    return scores, np.concatenate([points - dist[..., :2], points + dist[..., 2:]], -1)


def giou_loss(pred, target, eps: float = 1e-9):
    """``1 - GIoU`` per row of x1y1x2y2 boxes (tensors)."""
    px1, py1, px2, py2 = (pred[:, i] for i in range(4))
    tx1, ty1, tx2, ty2 = (target[:, i] for i in range(4))
    iw = F.relu(px2.minimum(tx2) - px1.maximum(tx1))
    ih = F.relu(py2.minimum(ty2) - py1.maximum(ty1))
    inter = iw * ih
    union = (px2 - px1) * (py2 - py1) + (tx2 - tx1) * (ty2 - ty1) - inter + eps
    hull = (px2.maximum(tx2) - px1.minimum(tx1)) * (py2.maximum(ty2) - py1.minimum(ty1)) + eps
    return 1 - (inter / union - (hull - union) / hull)


class PicoDetLoss(nn.Layer):
    """``loss(raw [N, A, C + 4 (reg_max + 1)], labels [N, 1 + M, 6])`` -> scalar."""

    def __init__(
        self,
        num_classes: int,
        reg_max: int = 7,
        strides=(8, 16, 32),
        loss_weights: dict | None = None,
        assigner: dict | None = None,
        vfl_alpha: float = 0.75,
        vfl_gamma: float = 2.0,
    ) -> None:
        super().__init__()
        weights = {"class": 1.0, "iou": 2.0, "dfl": 0.5, **(loss_weights or {})}
        if set(weights) != {"class", "iou", "dfl"}:
            raise ConfigError(f"Loss.loss_weights has keys {sorted(weights)}; use class, iou and dfl")
        assigner = dict(assigner or {})
        if assigner.pop("name", "TaskAlignedAssigner") != "TaskAlignedAssigner":
            raise ConfigError("Loss.assigner.name must be TaskAlignedAssigner")
        try:
            self.assigner = TaskAlignedAssigner(**assigner)
        except TypeError as exc:
            raise ConfigError(f"Loss.assigner: {exc}") from None
        self.num_classes, self.reg_max, self.strides = num_classes, reg_max, [int(s) for s in strides]
        self.weights, self.alpha, self.gamma = weights, float(vfl_alpha), float(vfl_gamma)

    def targets(self, raw: np.ndarray, labels: np.ndarray):
        """Per flattened point: class targets [N*A, C], predicted scores [N*A, C], and the positives'
        rows, boxes, scores; the anchor points and strides."""
        n, count, _ = raw.shape
        first = unpack(labels[0])
        points, stride = anchor_points(first.height, first.width, self.strides)
        if len(points) != count:
            raise ConfigError(
                f"the head gave {count} points for {first.height}x{first.width} inputs, the strides "
                f"{self.strides} give {len(points)}; Loss.strides must equal PicoHead.strides"
            )
        classes, gt_boxes, listed, crowd = objects(labels)
        probs, pred = decode_numpy(raw, self.num_classes, self.reg_max, points, stride)
        assigned = self.assigner(probs, pred, points, gt_boxes, classes, listed & ~crowd)
        image, point = np.nonzero(assigned.gt_index >= 0)  # image by image, points in order
        slot, score = assigned.gt_index[image, point], assigned.score[image, point]
        cls_target = np.zeros((n, count, self.num_classes), np.float32)
        cls_target[image, point, classes[image, slot]] = score
        flat = (n * count, self.num_classes)
        rows = image * count + point
        return cls_target.reshape(flat), probs.reshape(flat), rows, gt_boxes[image, slot], score, points, stride

    def forward(self, raw, labels):
        c, bins = self.num_classes, self.reg_max + 1
        with no_grad():
            cls_target, probs, rows, boxes, scores, points, stride = self.targets(
                raw.numpy(), np.asarray(labels.numpy())
            )
        n, count, width = raw.shape
        flat = raw.reshape([-1, width])
        logits = flat[:, :c]
        positive = cls_target > 0
        weight = np.where(positive, cls_target, self.alpha * probs**self.gamma * (1 - positive)).astype(np.float32)
        norm = max(float(scores.sum()), 1.0)
        vfl = (
            F.binary_cross_entropy_with_logits(logits, to_tensor(cls_target), weight=to_tensor(weight), reduction="sum")
            / norm
        )
        if len(rows) == 0:
            return self.weights["class"] * vfl + flat.sum() * 0.0
        index = to_tensor(rows.astype(np.int64))
        reg = flat.gather(index)[:, c:].reshape([-1, 4, bins])
        pts, st = points[rows % count], stride[rows % count]
        dist = F.softmax(reg, axis=-1).matmul(to_tensor(np.arange(bins, dtype=np.float32).reshape(bins, 1))).squeeze(-1)
        dist = dist * to_tensor(st[:, None])
        anchor = to_tensor(np.concatenate([pts, pts], 1))
        pred = anchor + dist * to_tensor(np.array([-1, -1, 1, 1], np.float32))
        w = to_tensor(scores)
        iou = (giou_loss(pred, to_tensor(boxes.astype(np.float32))) * w).sum() / norm
        target = np.clip(boxes_to_distances(pts, boxes) / st[:, None], 0, self.reg_max - 0.01).reshape(-1)
        left = np.floor(target).astype(np.int64)
        logp = F.log_softmax(reg.reshape([-1, bins]), axis=-1)
        picked_l = take_along_axis(logp, to_tensor(left[:, None]), 1).squeeze(-1)
        picked_r = take_along_axis(logp, to_tensor(left[:, None] + 1), 1).squeeze(-1)
        wl, wr = (left + 1 - target).astype(np.float32), (target - left).astype(np.float32)
        dfl = -(picked_l * to_tensor(wl) + picked_r * to_tensor(wr)).reshape([-1, 4]).mean(-1)
        dfl = (dfl * w).sum() / norm
        return self.weights["class"] * vfl + self.weights["iou"] * iou + self.weights["dfl"] * dfl
