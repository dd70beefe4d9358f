"""Recall@K, NDCG@K and HitRate@K of catalogue scores, as a framework Metric.

The model already excludes what a user rated in training; the metric excludes it again from the
data itself, so a model that failed to would not be scored on items it has seen. Cold-start users
(row 0, served by the popularity fallback) are counted in ``cold_start_users``.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.metric import Metric

from ..errors import DataError
from ..ranking import ranking_metrics, top_k

__all__ = ["RetrievalMetric"]


class RetrievalMetric(Metric):
    """Means over users of ``recall_at_k``, ``ndcg_at_k``, ``hit_rate_at_k`` for each ``k`` in ``ks``."""

    def __init__(self, history: np.ndarray, ks=(10,)) -> None:
        ks = tuple(ks)
        if not ks or any(not isinstance(k, int) or isinstance(k, bool) or k < 1 for k in ks):
            raise DataError(f"Metric.ks is {list(ks)!r}; give positive integers such as [10, 20]")
        self.history, self.ks = np.asarray(history, bool), ks
        self.reset()

    def reset(self) -> None:
        self.sums = dict.fromkeys(self._metric_names(), 0.0)
        self.users = 0
        self.cold = 0

    def _metric_names(self) -> list[str]:
        return [f"{m}_at_{k}" for k in self.ks for m in ("recall", "ndcg", "hit_rate")]

    def compute(self, scores, labels):
        scores, labels = np.asarray(scores), np.asarray(labels)
        if scores.ndim != 2 or scores.shape[1] != self.history.shape[1]:
            raise DataError(f"scores must be [users, {self.history.shape[1]} items]; got {scores.shape}")
        if labels.ndim != 2 or labels.shape[0] != scores.shape[0] or labels.shape[1] < 2:
            raise DataError(f"labels must be [users, 1 + held-out items]; got {labels.shape}")
        users = labels[:, 0]
        exclude = self.history[users].copy()
        exclude[:, 0] = True
        top = top_k(scores.astype(np.float64), max(self.ks), exclude)
        per_user = ranking_metrics(top, labels[:, 1:], self.ks)
        return [np.stack([per_user[n] for n in self._metric_names()], axis=1), (users == 0).astype(np.float64)]

    def update(self, per_user, cold) -> None:
        per_user = np.asarray(per_user)
        for column, name in enumerate(self._metric_names()):
            self.sums[name] += float(per_user[:, column].sum())
        self.users += per_user.shape[0]
        self.cold += int(np.asarray(cold).sum())

    def accumulate(self) -> list[float]:
        if not self.users:
            raise DataError("no user was evaluated; the test split is empty")
        return [self.sums[n] / self.users for n in self._metric_names()] + [float(self.cold)]

    def name(self) -> list[str]:
        return [*self._metric_names(), "cold_start_users"]
