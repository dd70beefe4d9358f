"""Accuracy and macro-averaged F1 of a classifier's logits over a whole evaluation set."""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.metric import Metric


def macro_f1(predicted: np.ndarray, truth: np.ndarray, classes: int) -> float:
    """The unweighted mean over classes of F1 (a class never predicted nor present counts 0, as
    scikit-learn's ``zero_division=0``)."""
    scores = []
    for c in range(classes):
        tp = int(((predicted == c) & (truth == c)).sum())
        denominator = int((predicted == c).sum() + (truth == c).sum())
        scores.append(2 * tp / denominator if denominator else 0.0)
    return float(np.mean(scores))


class ClassificationMetric(Metric):
    """Reports ``acc`` and ``macro_f1``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.predicted, self.truth, self.classes = [], [], 0

    def compute(self, logits, labels):
        logits, labels = np.asarray(logits), np.asarray(labels).reshape(-1)
        if logits.ndim != 2 or len(logits) != len(labels):
            raise DataError(
                f"classification takes logits [n, classes] and n labels, got {list(logits.shape)} and {len(labels)}"
            )
        if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[1]):
            raise DataError(f"labels must be class ids in [0, {logits.shape[1]}), got {labels.min()}..{labels.max()}")
        return logits.argmax(axis=1), labels, logits.shape[1]

    def update(self, predicted, truth, classes) -> None:
        self.predicted.append(np.asarray(predicted))
        self.truth.append(np.asarray(truth))
        self.classes = max(self.classes, int(classes))

    def accumulate(self) -> list[float]:
        if not self.predicted:
            return [0.0, 0.0]
        predicted, truth = np.concatenate(self.predicted), np.concatenate(self.truth)
        return [float((predicted == truth).mean()), macro_f1(predicted, truth, self.classes)]

    def name(self) -> list[str]:
        return ["acc", "macro_f1"]
