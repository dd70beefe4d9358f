"""PaddleSeg's losses over logits ``[N, C, H, W]`` and labels ``[N, H, W]`` (255 = ignore).

``SegLoss`` is the ``Loss`` section: ``types`` (one loss per model output, PaddleSeg's
``loss.types``) weighted by ``coef``. PP-LiteSeg returns three logit maps in training (deep
supervision), so it takes three; in eval mode a model returns its one main map and only the
first loss applies. Every loss averages over the pixels it scores, and a batch whose pixels are
all ignored gives 0, not NaN.
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError, ShapeError
from paddlectl.framework.hapi.builders import instantiate
from paddlectl.framework.nn import functional as F


def _check(logit, label) -> None:
    if len(logit.shape) != 4 or list(label.shape) != [logit.shape[0], *logit.shape[2:]]:
        raise ShapeError(
            f"segmentation losses take logits [N, C, H, W] and labels [N, H, W], got {list(logit.shape)} and "
            f"{list(label.shape)}"
        )


def _masked_ce(logit, label, ignore_index: int, weight=None):
    """Cross-entropy averaged over the pixels whose label is not ``ignore_index``."""
    per_pixel = F.cross_entropy(logit, label, weight=weight, ignore_index=ignore_index, reduction="none", axis=1)
    valid = paddle.cast(label != ignore_index, "float32")
    return per_pixel.reshape(valid.shape).sum() / paddle.clip(valid.sum(), min=1.0)


class CrossEntropyLoss(nn.Layer):
    """Softmax cross-entropy with optional per-class ``weight``, averaged over non-ignored pixels."""

    def __init__(self, weight=None, ignore_index: int = 255) -> None:
        super().__init__()
        self.weight = None if weight is None else paddle.to_tensor(np.asarray(weight, np.float32))
        self.ignore_index = int(ignore_index)

    def forward(self, logit, label):
        _check(logit, label)
        if self.weight is not None and self.weight.shape[0] != logit.shape[1]:
            raise ConfigError(f"CrossEntropyLoss.weight has {self.weight.shape[0]} values for {logit.shape[1]} classes")
        return _masked_ce(logit, label, self.ignore_index, self.weight)


class OhemCrossEntropyLoss(nn.Layer):
    """Online hard example mining: only pixels whose true-class probability is below ``thresh``
    are scored, but at least the ``min_kept`` hardest (the threshold rises to the min_kept-th
    smallest probability when fewer are below it), so easy background stops dominating."""

    def __init__(self, thresh: float = 0.7, min_kept: int = 10000, ignore_index: int = 255) -> None:
        super().__init__()
        if not 0 < thresh <= 1 or not isinstance(min_kept, int) or min_kept < 0:
            raise ConfigError(f"OhemCrossEntropyLoss needs 0 < thresh <= 1 and min_kept >= 0, got {thresh}, {min_kept}")
        self.thresh, self.min_kept, self.ignore_index = float(thresh), min_kept, int(ignore_index)

    def kept_labels(self, logit, label) -> np.ndarray:
        """The labels with every pixel not selected set to ``ignore_index`` (a constant: the
        selection is not differentiated, as in PaddleSeg)."""
        labels = label.numpy().astype(np.int64)
        valid = labels != self.ignore_index
        if not valid.any():
            return labels
        logits = logit.numpy().astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        prob = np.exp(logits)
        prob /= prob.sum(axis=1, keepdims=True)
        true_prob = np.take_along_axis(prob, np.where(valid, labels, 0)[:, None], axis=1)[:, 0][valid]
        threshold = self.thresh
        if self.min_kept > 0:
            k = min(self.min_kept, true_prob.size) - 1
            threshold = max(threshold, float(np.partition(true_prob, k)[k]))
        keep = np.zeros_like(valid)
        keep[valid] = true_prob < threshold
        return np.where(keep, labels, self.ignore_index)

    def forward(self, logit, label):
        _check(logit, label)
        kept = paddle.to_tensor(self.kept_labels(logit, label))
        return _masked_ce(logit, kept, self.ignore_index)


class DiceLoss(nn.Layer):
    """``1 - mean_c (2 |p_c * y_c| + smooth) / (|p_c| + |y_c| + smooth)`` over non-ignored pixels,
    with ``p`` the softmax: it scores overlap per class, so a small class counts as much as a
    large one."""

    def __init__(self, smooth: float = 1.0, ignore_index: int = 255) -> None:
        super().__init__()
        self.smooth, self.ignore_index = float(smooth), int(ignore_index)

    def forward(self, logit, label):
        _check(logit, label)
        classes = logit.shape[1]
        valid = paddle.cast(label != self.ignore_index, "float32").unsqueeze(1)
        target = F.one_hot(paddle.where(label == self.ignore_index, paddle.zeros_like(label), label), classes)
        target = target.transpose([0, 3, 1, 2]) * valid
        prob = F.softmax(logit, axis=1) * valid
        intersection = (prob * target).sum(axis=[0, 2, 3])
        cardinality = (prob + target).sum(axis=[0, 2, 3])
        return 1 - ((2 * intersection + self.smooth) / (cardinality + self.smooth)).mean()


LOSSES = {"CrossEntropyLoss": CrossEntropyLoss, "OhemCrossEntropyLoss": OhemCrossEntropyLoss, "DiceLoss": DiceLoss}


def _weighted(sections, coef, where: str, ignore_index: int) -> tuple[list, list[float]]:
    if not isinstance(sections, list) or not sections:
        raise ConfigError(f"{where}.types must be a list of losses, e.g. [{{name: OhemCrossEntropyLoss}}]")
    coef = [1.0] * len(sections) if coef is None else coef
    if not isinstance(coef, list) or len(coef) != len(sections):
        raise ConfigError(f"{where}.coef must hold one weight per entry of {where}.types ({len(sections)})")
    losses = []
    for i, section in enumerate(sections):
        if isinstance(section, dict) and section.get("name") == "MixedLoss":
            losses.append(MixedLoss(section.get("losses"), section.get("coef"), ignore_index))
            continue
        extra = {"ignore_index": ignore_index} if isinstance(section, dict) and "ignore_index" not in section else {}
        losses.append(instantiate(section, LOSSES, f"{where}.types[{i}]", **extra))
    return losses, [float(c) for c in coef]


class MixedLoss(nn.Layer):
    """A weighted sum of losses on one output (e.g. cross-entropy + Dice), PaddleSeg's ``MixedLoss``."""

    def __init__(self, losses, coef=None, ignore_index: int = 255) -> None:
        super().__init__()
        self.losses, self.coef = _weighted(losses, coef, "MixedLoss", ignore_index)

    def forward(self, logit, label):
        return sum(c * loss(logit, label) for c, loss in zip(self.coef, self.losses, strict=True))


class SegLoss(nn.Layer):
    """The ``Loss`` section: ``{types: [...], coef: [...]}``, one loss per model output."""

    def __init__(self, types, coef=None, ignore_index: int = 255) -> None:
        super().__init__()
        self.losses, self.coef = _weighted(types, coef, "Loss", ignore_index)

    def forward(self, outputs, label):
        outputs = outputs if isinstance(outputs, list | tuple) else [outputs]
        if len(outputs) > len(self.losses):
            raise ConfigError(
                f"the model returns {len(outputs)} logit maps in training but Loss.types has {len(self.losses)}; "
                "give one loss (and one coef) per output"
            )
        return sum(c * loss(o, label) for c, loss, o in zip(self.coef, self.losses, outputs, strict=False))
