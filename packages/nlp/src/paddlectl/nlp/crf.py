"""PaddleNLP's CRF layers (``paddlenlp.layers.crf``) on the framework's CRF ops (``paddle.text``).

``LinearChainCrf(num_labels, crf_lr, with_start_stop_tag)`` holds ``transitions`` [num_tags, num_tags];
with the start/stop tags, ``num_tags = num_labels + 2``, the last tag's row scores a path's first
tag and the second to last tag's row its last one: the layout ``paddle.text.viterbi_decode``
decodes with ``include_bos_eos_tag=True``, so ``ViterbiDecoder`` finds exactly the path this CRF
scores highest. ``inputs`` are emissions [batch, seq_len, num_tags]. Unlike PaddleNLP, the gold
score also counts the stop transition, so the loss is the exact negative log-likelihood (>= 0)
and needs no clipping.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.text import ViterbiDecoder as _PaddleViterbiDecoder
from paddlectl.framework.text import linear_chain_crf

__all__ = ["LinearChainCrf", "LinearChainCrfLoss", "ViterbiDecoder"]


class LinearChainCrf(nn.Layer):
    """Transition scores between tags; ``forward`` gives each sequence's log-partition log Z."""

    def __init__(self, num_labels: int, crf_lr: float = 0.1, with_start_stop_tag: bool = True):
        super().__init__()
        if isinstance(num_labels, bool) or not isinstance(num_labels, int) or num_labels < 1:
            raise ConfigError(f"LinearChainCrf: num_labels must be a positive integer, got {num_labels!r}")
        self.with_start_stop_tag = bool(with_start_stop_tag)
        self.num_tags = num_labels + 2 if self.with_start_stop_tag else num_labels
        self.start_idx, self.stop_idx = self.num_tags - 1, self.num_tags - 2
        self.transitions = self.create_parameter(
            [self.num_tags, self.num_tags], attr=paddle.ParamAttr(learning_rate=crf_lr)
        )

    def weights(self):
        """The classic ``linear_chain_crf`` layout [num_tags + 2, num_tags]: start row, stop row,
        tag-to-tag rows (start and stop rows 0 without the start/stop tags)."""
        if self.with_start_stop_tag:
            ends = paddle.stack([self.transitions[self.start_idx], self.transitions[self.stop_idx]])
        else:
            ends = paddle.zeros([2, self.num_tags], self.transitions.dtype)
        return paddle.concat([ends, self.transitions])

    def nll(self, inputs, labels, lengths):
        """Each sequence's negative log-likelihood log Z - score(labels) [batch]."""
        return linear_chain_crf(inputs, self.weights(), labels, lengths)

    def gold_score(self, inputs, labels, lengths):
        """The unnormalised score of ``labels`` [batch]: emissions, transitions, start and stop."""
        steps = paddle.arange(inputs.shape[1], dtype="int64").unsqueeze(0)
        mask = (steps < lengths.unsqueeze(1)).astype(inputs.dtype)
        point = (paddle.take_along_axis(inputs, labels.unsqueeze(-1), 2).squeeze(-1) * mask).sum(1)
        weights = self.weights()
        pair = weights[2:].reshape([-1])[(labels[:, :-1] * self.num_tags + labels[:, 1:]).reshape([-1])]
        trans = (pair.reshape([labels.shape[0], -1]) * mask[:, 1:]).sum(1)
        first, last = labels[:, 0], paddle.take_along_axis(labels, (lengths - 1).unsqueeze(1), 1).squeeze(1)
        return point + trans + weights[0][first] + weights[1][last]

    def forward(self, inputs, lengths):
        zeros = paddle.zeros(inputs.shape[:2], "int64")
        return self.nll(inputs, zeros, lengths) + self.gold_score(inputs, zeros, lengths)


class LinearChainCrfLoss(nn.Layer):
    """The CRF's negative log-likelihood per sequence, ``forward(inputs, lengths, labels)``."""

    def __init__(self, crf: LinearChainCrf):
        super().__init__()
        if not isinstance(crf, LinearChainCrf):
            raise ConfigError(
                f"LinearChainCrfLoss takes the LinearChainCrf layer itself, got {type(crf).__name__} "
                "(pass `crf`, not `crf.transitions`)"
            )
        self.crf = crf

    def forward(self, inputs, lengths, labels, old_version_labels=None):
        return self.crf.nll(inputs, labels if old_version_labels is None else old_version_labels, lengths)


class ViterbiDecoder(_PaddleViterbiDecoder):
    """PaddleNLP's spelling of ``paddle.text.ViterbiDecoder``: ``with_start_stop_tag`` for
    ``include_bos_eos_tag``; ``forward(inputs, lengths)`` -> (scores, paths)."""

    def __init__(self, transitions, with_start_stop_tag: bool = True):
        super().__init__(transitions, include_bos_eos_tag=with_start_stop_tag)
