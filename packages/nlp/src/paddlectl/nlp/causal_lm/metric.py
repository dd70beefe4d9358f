"""Perplexity and next-character accuracy over logits ``[batch, seq, vocab]`` and ids ``[batch, seq]``.

Perplexity is ``exp`` of the mean negative log-likelihood per character over the whole set (not a
mean of per-batch perplexities). Both are computed a window at a time, so a large evaluation set
never needs a float64 copy of all its logits.
"""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import DataError
from paddlectl.framework.metric import Metric


def _numpy(value) -> np.ndarray:
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


class Perplexity(Metric):
    """Reports ``acc`` (next character right) and ``ppl``; the trainer keeps the best ``acc``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.nll, self.correct, self.count = 0.0, 0, 0

    def compute(self, logits, labels):
        logits, labels = _numpy(logits), _numpy(labels).astype(np.int64)
        if logits.ndim != 3 or labels.shape != logits.shape[:2]:
            raise DataError(
                f"perplexity takes logits [batch, seq, vocab] and ids [batch, seq], got {list(logits.shape)} "
                f"and {list(labels.shape)}"
            )
        if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[-1]):
            raise DataError(f"label ids must be in [0, {logits.shape[-1]}), got {labels.min()}..{labels.max()}")
        nll, correct = 0.0, 0
        for window, ids in zip(logits, labels, strict=True):
            rows = window.astype(np.float64)
            top = rows.max(axis=-1)
            log_norm = top + np.log(np.exp(rows - top[:, None]).sum(axis=-1))
            nll += float((log_norm - rows[np.arange(len(ids)), ids]).sum())
            correct += int((rows.argmax(axis=-1) == ids).sum())
        return nll, correct, labels.size

    def update(self, nll, correct, count) -> None:
        self.nll += float(nll)
        self.correct += int(correct)
        self.count += int(count)

    def accumulate(self) -> list[float]:
        if not self.count:
            return [0.0, float("inf")]
        return [self.correct / self.count, float(np.exp(self.nll / self.count))]

    def name(self) -> list[str]:
        return ["acc", "ppl"]


__all__ = ["Perplexity"]
