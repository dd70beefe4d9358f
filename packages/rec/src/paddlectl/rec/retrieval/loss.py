"""In-batch sampled softmax, the two-tower training loss (Yi et al., RecSys 2019; PaddleRec's DSSM).

Row ``i`` of the [B, B] logits scores user ``i`` against every item of the batch; its own item is
the positive, the others are negatives sampled by popularity (they are other users' positives).
When two rows share an item, that item is not a negative for the other row: its logit is masked.
In evaluation the model scores the whole catalogue instead, and the loss is the full softmax
cross-entropy of the first held-out item, so the eval loss is the quantity training estimates.
"""

from __future__ import annotations

import paddlectl.framework as paddle
import paddlectl.framework.nn.functional as F

from ..errors import DataError

__all__ = ["InBatchSoftmax"]

MASK = -1.0e9


class InBatchSoftmax:
    """``loss(logits, labels)``: labels [B] item rows (training), or [N, 1 + T] user row and held-out
    item rows (evaluation, against catalogue scores)."""

    def __call__(self, logits, labels):
        if labels.ndim == 2:
            return F.cross_entropy(logits, labels[:, 1])
        if logits.ndim != 2 or logits.shape[0] != logits.shape[1] or labels.shape[0] != logits.shape[0]:
            raise DataError(f"in-batch logits must be [B, B] for B labels; got {logits.shape} and {labels.shape}")
        same = labels.unsqueeze(1) == labels.unsqueeze(0)
        others = paddle.logical_and(same, paddle.logical_not(paddle.eye(labels.shape[0], dtype="bool")))
        logits = paddle.where(others, paddle.full_like(logits, MASK), logits)
        return F.cross_entropy(logits, paddle.arange(labels.shape[0], dtype="int64"))
