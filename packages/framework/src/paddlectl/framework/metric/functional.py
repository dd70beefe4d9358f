"""``paddle.metric.accuracy``: top-k accuracy of one batch as a float32 Tensor."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError

__all__ = ["accuracy"]


def accuracy(input, label, k: int = 1, correct=None, total=None, name=None) -> Tensor:
    """Fraction of rows of ``input`` [N, C] whose top-``k`` scores include ``label`` [N, 1] (a 0-D float32 Tensor).

    ``correct``/``total``, when given, receive the counts (int32 [1]) as in Paddle.
    """
    scores = np.asarray(input.numpy() if isinstance(input, Tensor) else input)
    labels = np.asarray(label.numpy() if isinstance(label, Tensor) else label)
    if scores.ndim != 2 or labels.size != scores.shape[0]:
        raise ShapeError(
            f"accuracy: expected input [N, C] and label [N, 1]; got input {list(scores.shape)}, "
            f"label {list(labels.shape)}; reshape the label to [N, 1]"
        )
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    hits = int(np.any(top == labels.reshape(-1, 1), axis=1).sum())
    n = scores.shape[0]
    for holder, value in ((correct, hits), (total, n)):
        if holder is not None:  # Paddle writes the counts into the given tensors, whatever their shape
            holder._data = np.array([value], dtype="int32")
    return Tensor._wrap(np.array(hits / n if n else 0.0, dtype="float32"))
