"""PaddleOCR's ``CTCLoss`` for the recogniser: CTC over every column of the head's [B, T, C] logits
against the blank-padded labels, averaged over the batch (not divided by label length, as
PaddleOCR's reduction ``none`` + ``mean`` does); ``use_focal_loss`` weights hard lines more."""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.nn import functional as F


class CTCLoss(nn.Layer):
    def __init__(self, use_focal_loss: bool = False) -> None:
        super().__init__()
        self.use_focal_loss = bool(use_focal_loss)

    def forward(self, predicts, label):
        """``predicts`` [B, T, C] logits; ``label`` [B, L] int64, class indices then blanks (0)."""
        batch, steps = predicts.shape[0], predicts.shape[1]
        label = label.astype("int32")
        lengths = paddle.sum((label != 0).astype("int64"), axis=1)
        input_lengths = paddle.full([batch], steps, dtype="int64")
        loss = F.ctc_loss(
            paddle.transpose(predicts, [1, 0, 2]), label, input_lengths, lengths, blank=0, reduction="none"
        )
        if self.use_focal_loss:
            weight = (1.0 - paddle.exp(-loss)) ** 2
            loss = loss * weight
        return loss.mean()
