"""PaddleSeg's evaluation numbers, computed the way PaddleSeg computes them.

Per class ``i``, three areas are summed over the whole evaluation set: ``intersect`` (predicted i
and labelled i), ``pred`` (predicted i where the label is not ``ignore_index``) and ``label``
(labelled i). Everything else is a function of those three vectors, so a dataset's numbers do
not depend on how it was batched. Conventions kept from PaddleSeg on purpose: a class whose
union (or sum, for Dice) is empty scores 0 and still counts in the mean; pixel accuracy is
``sum(intersect) / sum(pred)``; Kappa is Cohen's, from the same areas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paddlectl.framework.errors import ShapeError
from paddlectl.framework.metric import Metric


def calculate_area(pred: np.ndarray, label: np.ndarray, num_classes: int, ignore_index: int = 255):
    """``(intersect, pred, label)`` areas per class (int64 ``[num_classes]``) of one batch."""
    pred, label = np.asarray(pred), np.asarray(label)
    if pred.ndim == 4 and pred.shape[1] == 1:
        pred = pred[:, 0]
    if label.ndim == 4 and label.shape[1] == 1:
        label = label[:, 0]
    if pred.shape != label.shape:
        raise ShapeError(f"prediction {list(pred.shape)} and label {list(label.shape)} must have one shape")
    valid = label != ignore_index
    pred_area = np.bincount(pred[valid].ravel(), minlength=num_classes)[:num_classes]
    label_area = np.bincount(label[valid].ravel(), minlength=num_classes)[:num_classes]
    hits = valid & (pred == label)
    intersect = np.bincount(label[hits].ravel(), minlength=num_classes)[:num_classes]
    return tuple(np.asarray(a, np.int64) for a in (intersect, pred_area, label_area))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ratio with 0 where the denominator is 0 (PaddleSeg's convention)."""
    numerator, denominator = np.asarray(numerator, np.float64), np.asarray(denominator, np.float64)
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def mean_iou(intersect, pred, label) -> tuple[np.ndarray, float]:
    """Class IoU ``I / (P + L - I)`` and their mean over every class."""
    class_iou = _ratio(intersect, np.asarray(pred) + np.asarray(label) - np.asarray(intersect))
    return class_iou, float(class_iou.mean())


def dice(intersect, pred, label) -> tuple[np.ndarray, float]:
    """Class Dice ``2I / (P + L)`` and their mean."""
    class_dice = _ratio(2 * np.asarray(intersect), np.asarray(pred) + np.asarray(label))
    return class_dice, float(class_dice.mean())


def class_measurement(intersect, pred, label) -> tuple[float, np.ndarray, np.ndarray]:
    """Pixel accuracy ``sum(I) / sum(P)``, class precision ``I / P`` and class recall ``I / L``."""
    total = float(np.sum(pred))
    accuracy = float(np.sum(intersect)) / total if total else 0.0
    return accuracy, _ratio(intersect, pred), _ratio(intersect, label)


def kappa(intersect, pred, label) -> float:
    """Cohen's kappa: observed agreement ``sum(I)/T`` against chance ``sum(P*L)/T^2``."""
    intersect, pred, label = (np.asarray(a, np.float64) for a in (intersect, pred, label))
    total = label.sum()
    if total == 0:
        return 0.0
    observed = intersect.sum() / total
    chance = (pred * label).sum() / (total * total)
    return float((observed - chance) / (1 - chance)) if chance != 1 else 0.0


@dataclass
class SegScores:
    """Every number ``paddlectl eval`` and the trainer report for a segmenter."""

    miou: float
    acc: float
    kappa: float
    mdice: float
    class_iou: np.ndarray
    class_dice: np.ndarray
    class_precision: np.ndarray
    class_recall: np.ndarray


def scores(intersect, pred, label) -> SegScores:
    class_iou, miou = mean_iou(intersect, pred, label)
    class_dice, mdice = dice(intersect, pred, label)
    acc, precision, recall = class_measurement(intersect, pred, label)
    return SegScores(miou, acc, kappa(intersect, pred, label), mdice, class_iou, class_dice, precision, recall)


def label_map(output: np.ndarray) -> np.ndarray:
    """Logits ``[N, C, H, W]`` -> class ids ``[N, H, W]``; a label map passes through."""
    output = np.asarray(output)
    if output.ndim == 4:
        return output.argmax(axis=1)
    if output.ndim == 3:
        return output.astype(np.int64)
    raise ShapeError(f"a segmenter's output must be logits [N, C, H, W] or a label map [N, H, W], got {output.shape}")


class SegMetric(Metric):
    """The framework's Metric over PaddleSeg's areas: mIoU, Acc, Kappa, mDice, and per-class IoU
    reported as ``iou_<class name>`` (the class names of ``PostProcess.label_list`` when given)."""

    def __init__(self, num_classes: int, ignore_index: int = 255, label_list=None) -> None:
        if not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"num_classes is {num_classes!r}; a segmenter needs at least 2 classes")
        names = list(label_list) if label_list else [str(i) for i in range(num_classes)]
        if len(names) != num_classes:
            raise ValueError(f"label_list names {len(names)} classes, num_classes is {num_classes}")
        self.num_classes, self.ignore_index, self.class_names = num_classes, int(ignore_index), names
        self.reset()

    def reset(self) -> None:
        self.areas = [np.zeros(self.num_classes, np.int64) for _ in range(3)]

    def compute(self, output, label, *args):
        """Areas of one batch: the argmax of the logits (or a label map) against the labels."""
        output = output.numpy() if hasattr(output, "numpy") else output
        label = label.numpy() if hasattr(label, "numpy") else label
        return calculate_area(label_map(output), np.asarray(label), self.num_classes, self.ignore_index)

    def update(self, intersect, pred, label, *args) -> None:
        for total, batch in zip(self.areas, (intersect, pred, label), strict=True):
            total += np.asarray(batch, np.int64)

    def result(self) -> SegScores:
        return scores(*self.areas)

    def accumulate(self) -> list[float]:
        s = self.result()
        return [s.miou, s.acc, s.kappa, s.mdice, *(float(v) for v in s.class_iou)]

    def name(self) -> list[str]:
        return ["miou", "acc", "kappa", "mdice", *(f"iou_{n}" for n in self.class_names)]
