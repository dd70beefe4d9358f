"""Metric classes with Paddle's protocol: ``compute`` (on tensors) -> ``update`` (numpy) -> ``accumulate``."""

from __future__ import annotations

import abc

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError

__all__ = ["Accuracy", "Auc", "Metric", "Precision", "Recall"]


def _numpy(value, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    raise ValueError(f"The '{what}' must be a numpy ndarray or Tensor, got {type(value).__name__}")


class Metric(abc.ABC):
    """Base class: subclasses define reset, update, accumulate and name; compute is optional."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Clear the accumulated state."""

    @abc.abstractmethod
    def update(self, *args):
        """Add a batch's statistics."""

    @abc.abstractmethod
    def accumulate(self):
        """The metric over everything since the last reset."""

    @abc.abstractmethod
    def name(self):
        """The metric's name(s), as the training loop logs them."""

    def compute(self, *args):
        """Preprocess a batch's outputs (runs on Tensors, before ``update``); identity by default."""
        return args


class Accuracy(Metric):
    """Top-k accuracy for each k in ``topk``."""

    def __init__(self, topk=(1,), name: str | None = None, *args, **kwargs) -> None:
        super().__init__()
        self.topk = tuple(topk)
        self.maxk = max(self.topk)
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in self.topk] if self.maxk != 1 else [name]
        self.reset()

    def compute(self, pred, label, *args) -> Tensor:
        """1.0 where each of the top ``maxk`` predictions equals the label, per sample (float32 [N, maxk])."""
        pred, label = _numpy(pred, "pred"), _numpy(label, "label")
        top = np.argsort(-pred, axis=-1, kind="stable")[..., : self.maxk]
        if label.ndim == 1 or (label.ndim == 2 and label.shape[-1] == 1):
            label = label.reshape(-1, 1)
        elif label.shape[-1] != 1:
            label = np.argmax(label, axis=-1, keepdims=True)
        return Tensor._wrap((top == label.astype(top.dtype)).astype("float32"))

    def update(self, correct, *args):
        correct = _numpy(correct, "correct")
        num_samples = int(np.prod(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = correct[..., :k].sum()
            accs.append(float(num_corrects) / num_samples)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count, strict=True)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        return self._name


class _BinaryCounts(Metric):
    """Precision and Recall: counts over binary predictions (probabilities rounded at 0.5)."""

    def __init__(self, name: str, *args, **kwargs) -> None:
        super().__init__()
        self._name = name
        self.reset()

    def update(self, preds, labels) -> None:
        preds = np.rint(_numpy(preds, "preds")).astype("int32").reshape(-1)
        labels = _numpy(labels, "labels").reshape(-1)
        self._count(preds == 1, labels == 1)

    def name(self) -> str:
        return self._name


class Precision(_BinaryCounts):
    """tp / (tp + fp) for binary classification."""

    def __init__(self, name: str = "precision", *args, **kwargs) -> None:
        super().__init__(name)

    def _count(self, predicted: np.ndarray, actual: np.ndarray) -> None:
        self.tp += int(np.sum(predicted & actual))
        self.fp += int(np.sum(predicted & ~actual))

    def reset(self) -> None:
        self.tp = 0
        self.fp = 0

    def accumulate(self) -> float:
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(_BinaryCounts):
    """tp / (tp + fn) for binary classification."""

    def __init__(self, name: str = "recall", *args, **kwargs) -> None:
        super().__init__(name)

    def _count(self, predicted: np.ndarray, actual: np.ndarray) -> None:
        self.tp += int(np.sum(predicted & actual))
        self.fn += int(np.sum(~predicted & actual))

    def reset(self) -> None:
        self.tp = 0
        self.fn = 0

    def accumulate(self) -> float:
        total = self.tp + self.fn
        return float(self.tp) / total if total != 0 else 0.0


class Auc(Metric):
    """Area under the ROC curve from ``num_thresholds + 1`` histogram buckets of the positive-class score."""

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc", *args, **kwargs) -> None:
        super().__init__()
        self._curve = curve
        self._num_thresholds = num_thresholds
        self._name = name
        self.reset()

    def update(self, preds, labels) -> None:
        """``preds``: [N, 2] class probabilities (column 1 is the positive class); ``labels``: [N] or [N, 1]."""
        labels = _numpy(labels, "labels").reshape(-1)
        preds = _numpy(preds, "preds")
        if preds.ndim != 2 or preds.shape[1] < 2 or preds.shape[0] != labels.shape[0]:
            raise ShapeError(
                f"Auc.update: preds must be [N, 2] probabilities and labels [N]; got preds {list(preds.shape)}, "
                f"labels {list(labels.shape)}"
            )
        bins = (preds[:, 1] * self._num_thresholds).astype("int64")
        if bins.size and (bins.max() > self._num_thresholds or bins.min() < 0):
            raise ValueError("Auc.update: positive-class probabilities must lie in [0, 1]")
        positive = labels.astype(bool)
        self._stat_pos += np.bincount(bins[positive], minlength=self._num_thresholds + 1)
        self._stat_neg += np.bincount(bins[~positive], minlength=self._num_thresholds + 1)

    def accumulate(self) -> float:
        pos = np.cumsum(self._stat_pos[::-1])
        neg = np.cumsum(self._stat_neg[::-1])
        pos_prev = np.concatenate([[0.0], pos[:-1]])
        neg_prev = np.concatenate([[0.0], neg[:-1]])
        area = float(np.sum(np.abs(neg - neg_prev) * (pos + pos_prev) / 2.0))
        total_pos, total_neg = pos[-1], neg[-1]
        return area / total_pos / total_neg if total_pos > 0 and total_neg > 0 else 0.0

    def reset(self) -> None:
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)

    def name(self) -> str:
        return self._name
