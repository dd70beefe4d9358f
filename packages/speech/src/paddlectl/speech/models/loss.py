"""CTC loss for the recognisers: every encoder frame of [B, T, C] logits against blank-padded
label rows (0 = blank = padding), each utterance's loss divided by its label length then averaged
(Paddle's ``ctc_loss`` ``reduction="mean"``), so long digit strings do not outweigh short ones."""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.nn import functional as F


class CTCLoss(nn.Layer):
    def forward(self, logits, label):
        batch, steps = logits.shape[0], logits.shape[1]
        lengths = paddle.sum((label != 0).astype("int64"), axis=1)
        frames = paddle.full([batch], steps, dtype="int64")
        log_probs = paddle.transpose(logits, [1, 0, 2])
        return F.ctc_loss(log_probs, label.astype("int32"), frames, lengths, blank=0, reduction="mean")
