"""CTR metrics over the models' click probabilities ``[N, 1]``: AUC and log loss.

AUC is the framework's ``metric.Auc`` (Paddle's bucketed ROC area, 4095 thresholds) fed the
``[1 - p, p]`` pair it expects, as PaddleRec's models build ``predict_2d``; log loss is exact.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import ShapeError
from paddlectl.framework.metric import Auc, Metric

EPS = 1e-7  # probabilities clipped away from 0 and 1 so one confident miss is finite


def _pair(preds, labels) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(preds.numpy() if hasattr(preds, "numpy") else preds, np.float64).reshape(-1)
    y = np.asarray(labels.numpy() if hasattr(labels, "numpy") else labels, np.float64).reshape(-1)
    if p.shape != y.shape:
        raise ShapeError(f"CTR metrics need one probability per label; got {p.size} probabilities, {y.size} labels")
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError("CTR metrics need probabilities in [0, 1]; the model gave NaN or values outside")
    return p, y


class CtrAuc(Auc):
    """ROC AUC of click probabilities ``[N, 1]`` against 0/1 labels."""

    def compute(self, preds, labels):
        p, y = _pair(preds, labels)
        return np.stack([1.0 - p, p], axis=1), y


class LogLoss(Metric):
    """Mean binary cross-entropy (natural log) of click probabilities, accumulated over batches."""

    def __init__(self, name: str = "logloss") -> None:
        super().__init__()
        self._name = name
        self.reset()

    def compute(self, preds, labels):
        return _pair(preds, labels)

    def update(self, preds, labels) -> None:
        p, y = _pair(preds, labels)
        p = np.clip(p, EPS, 1 - EPS)
        self._sum += float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).sum())
        self._count += p.size

    def accumulate(self) -> float:
        return self._sum / self._count if self._count else 0.0

    def reset(self) -> None:
        self._sum, self._count = 0.0, 0

    def name(self) -> str:
        return self._name
