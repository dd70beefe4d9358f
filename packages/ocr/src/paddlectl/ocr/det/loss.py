"""DBLoss as PaddleOCR defines it: ``alpha * L_shrink + beta * L_threshold + L_binary``.

- ``L_shrink``: ``BalanceLoss`` on the probability map: the per-pixel main loss over all
  positive pixels and only the hardest negatives, at most ``negative_ratio`` per positive (OHEM).
- ``L_threshold``: ``MaskL1Loss``, mean absolute error inside the border (threshold) mask.
- ``L_binary``: ``DiceLoss`` between the binarised map and the shrink map, inside the mask.

The label is one array per image, the maps ``[threshold_map, threshold_mask, shrink_map,
shrink_mask]`` stacked on the channel axis (PaddleOCR's ``KeepKeys`` order for training).
In eval mode the head gives only the probability map and the label is the evaluation table
(``table``): the loss is then ``alpha * L_shrink`` against shrink maps drawn from its polygons.
PaddleOCR's default ``main_loss_type`` is ``DiceLoss``, kept so its configs mean the same here;
with a Dice main loss the OHEM balancing has no effect (Dice is one number for the whole map), so
the shipped configs use ``BCELoss``, the DB paper's balanced cross-entropy.
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError, ShapeError

from .label_maps import MakeShrinkMap
from .table import unpack

EPS = 1e-6
MAIN_LOSSES = ("BCELoss", "DiceLoss", "MaskL1Loss")


def dice_loss(pred, gt, mask, eps: float = EPS):
    """``1 - 2 |P*G*M| / (|P*M| + |G*M| + eps)``."""
    intersection = (pred * gt * mask).sum()
    union = (pred * mask).sum() + (gt * mask).sum() + eps
    return 1 - 2.0 * intersection / union


def mask_l1_loss(pred, gt, mask, eps: float = EPS):
    """Mean ``|P - G|`` over the mask."""
    return (paddle.abs(pred - gt) * mask).sum() / (mask.sum() + eps)


def bce_map(pred, gt):
    """Per-pixel binary cross-entropy (logs clipped at -100, as Paddle's BCELoss)."""
    return paddle.nn.functional.binary_cross_entropy(pred, gt, reduction="none")


class BalanceLoss(nn.Layer):
    """Positives plus the ``negative_ratio`` x as many hardest negatives (OHEM), averaged."""

    def __init__(self, balance_loss: bool = True, main_loss_type: str = "DiceLoss", negative_ratio: float = 3,
                 eps: float = EPS) -> None:  # fmt: skip
        super().__init__()
        if main_loss_type not in MAIN_LOSSES:
            raise ConfigError(f"Loss.main_loss_type is {main_loss_type!r}; choose from {', '.join(MAIN_LOSSES)}")
        if not isinstance(negative_ratio, int | float) or negative_ratio < 0:
            raise ConfigError(f"Loss.ohem_ratio is {negative_ratio!r}; give the negatives per positive, e.g. 3")
        self.balance_loss, self.main_loss_type = bool(balance_loss), main_loss_type
        self.negative_ratio, self.eps = float(negative_ratio), eps

    def _main(self, pred, gt, mask):
        if self.main_loss_type == "BCELoss":
            return bce_map(pred, gt)
        if self.main_loss_type == "DiceLoss":
            return dice_loss(pred, gt, mask, self.eps)
        return mask_l1_loss(pred, gt, mask, self.eps)

    def forward(self, pred, gt, mask):
        positive = gt * mask
        negative = (1 - gt) * mask
        positive_count = int(positive.sum().item())
        negative_count = int(min(float(negative.sum().item()), positive_count * self.negative_ratio))
        loss = self._main(pred, gt, mask)
        if not self.balance_loss:
            return loss
        positive_loss = (positive * loss).sum()
        if negative_count == 0:
            return positive_loss / (positive_count + self.eps)
        hardest = paddle.topk((negative * loss).reshape([-1]), negative_count)[0]
        return (positive_loss + hardest.sum()) / (positive_count + negative_count + self.eps)


class DBLoss(nn.Layer):
    """``loss(maps [N, 3, H, W], label [N, 4, H, W])`` -> scalar; see the module docstring."""

    def __init__(self, balance_loss: bool = True, main_loss_type: str = "DiceLoss", alpha: float = 5,
                 beta: float = 10, ohem_ratio: float = 3, eps: float = EPS) -> None:  # fmt: skip
        super().__init__()
        self.alpha, self.beta, self.eps = float(alpha), float(beta), eps
        self.bce_loss = BalanceLoss(balance_loss, main_loss_type, ohem_ratio, eps)

    def forward(self, maps, label):
        if len(maps.shape) == 4 and maps.shape[1] == 1 and len(label.shape) == 3:
            return self.alpha * self._eval_shrink_loss(maps, label)
        if len(maps.shape) != 4 or maps.shape[1] != 3 or list(label.shape) != [maps.shape[0], 4, *maps.shape[2:]]:
            raise ShapeError(
                f"DBLoss takes the training maps [N, 3, H, W] and labels [N, 4, H, W], got {list(maps.shape)} and "
                f"{list(label.shape)}; the head returns 3 maps only in training mode (model.train())"
            )
        shrink, threshold, binary = maps[:, 0], maps[:, 1], maps[:, 2]
        threshold_map, threshold_mask, shrink_map, shrink_mask = label[:, 0], label[:, 1], label[:, 2], label[:, 3]
        loss_shrink = self.bce_loss(shrink, shrink_map, shrink_mask)
        loss_threshold = mask_l1_loss(threshold, threshold_map, threshold_mask, self.eps)
        loss_binary = dice_loss(binary, shrink_map, shrink_mask, self.eps)
        return self.alpha * loss_shrink + self.beta * loss_threshold + loss_binary

    def _eval_shrink_loss(self, maps, tables):
        """The probability-map term against shrink maps drawn from evaluation tables at the map's size."""
        h, w = maps.shape[2:]
        targets = []
        for table in tables.numpy():
            (_, _, ratio_h, ratio_w), polys, ignore = unpack(table)
            scaled = [p * (ratio_w, ratio_h) for p in polys]
            data = {"image": np.empty((h, w), np.uint8), "polys": scaled, "ignore_tags": np.array(ignore, bool)}
            data = MakeShrinkMap()(data)
            targets.append(np.stack([data["shrink_map"], data["shrink_mask"]]))
        target = paddle.to_tensor(np.stack(targets))
        return self.bce_loss(maps[:, 0], target[:, 0], target[:, 1])
