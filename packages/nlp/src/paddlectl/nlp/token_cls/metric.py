"""Entity-level precision, recall and F1 as seqeval computes them (CoNLL's rule: an entity counts
when its type and both ends are right), over CRF-decoded tag paths."""

from __future__ import annotations

import numpy as np
from seqeval.metrics import f1_score, precision_score, recall_score

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError
from paddlectl.framework.metric import Metric
from paddlectl.framework.text import crf_decoding

from .model import unpack


def decode(packed: np.ndarray) -> tuple[list[np.ndarray], int]:
    """Each sequence's best tag ids (its own length) from a tagger's packed output, and the tag count."""
    emissions, weights, lengths = unpack(np.asarray(packed))
    if lengths.min(initial=1) < 1 or lengths.max(initial=0) > emissions.shape[1]:
        raise DataError(f"the packed lengths {lengths.tolist()[:8]} do not fit {emissions.shape[1]} steps")
    paths = crf_decoding(paddle.to_tensor(emissions), paddle.to_tensor(weights), paddle.to_tensor(lengths)).numpy()
    return [path[:n] for path, n in zip(paths, lengths, strict=True)], emissions.shape[2]


def tag_names(ids, labels) -> list[str]:
    """Tag ids as names; the CRF's start/stop tags (ids past the labels) read as ``O``."""
    return [labels[i] if i < len(labels) else "O" for i in ids]


class EntityF1(Metric):
    """Reports ``f1``, ``precision`` and ``recall`` over every sequence since ``reset``."""

    def __init__(self, labels) -> None:
        self.labels = list(labels)
        self.reset()

    def reset(self) -> None:
        self.truth, self.predicted = [], []

    def compute(self, packed, labels):
        paths, _ = decode(packed)
        labels = np.asarray(labels)
        if labels.shape[0] != len(paths):
            raise DataError(f"{labels.shape[0]} label rows for {len(paths)} sequences")
        if labels.size and (labels.min() < 0 or labels.max() >= len(self.labels)):
            raise DataError(f"tag ids must be in [0, {len(self.labels)}), got {labels.min()}..{labels.max()}")
        truth = [tag_names(row[: len(path)], self.labels) for row, path in zip(labels, paths, strict=True)]
        return truth, [tag_names(path, self.labels) for path in paths]

    def update(self, truth, predicted) -> None:
        self.truth += truth
        self.predicted += predicted

    def accumulate(self) -> list[float]:
        if not self.truth:
            return [0.0, 0.0, 0.0]
        args = (self.truth, self.predicted)
        return [float(f(*args, zero_division=0)) for f in (f1_score, precision_score, recall_score)]

    def name(self) -> list[str]:
        return ["f1", "precision", "recall"]
