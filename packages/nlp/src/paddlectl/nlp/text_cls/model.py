"""Sentence classifiers over character ids (0 = padding): a CNN (Kim, 2014) trained from scratch,
and a BERT-architecture encoder (``paddlectl.nlp.encoder``) with a linear head."""

from __future__ import annotations

from collections.abc import Sequence

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import CheckpointError, ConfigError
from paddlectl.framework.nn import functional as F

from ..checkpoint import load_pretrained
from ..encoder import BertConfig, BertModel
from .pretrained import checkpoint_dir


class CharCNN(nn.Layer):
    """Embeddings, parallel 1-D convolutions of several widths, max over time, dropout, linear."""

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        embed_dim: int = 128,
        num_filters: int = 128,
        kernel_sizes: Sequence[int] = (2, 3, 4),
        dropout: float = 0.3,
    ) -> None:
        super().__init__()
        if not kernel_sizes or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in kernel_sizes):
            raise ConfigError(f"CharCNN.kernel_sizes must be positive integers, got {kernel_sizes!r}")
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.convs = nn.LayerList([nn.Conv1D(embed_dim, num_filters, k, padding=k // 2) for k in kernel_sizes])
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(num_filters * len(kernel_sizes), num_classes)

    def forward(self, input_ids):
        x = self.embedding(input_ids).transpose([0, 2, 1])
        pooled = [F.relu(conv(x)).max(axis=2) for conv in self.convs]
        return self.fc(self.dropout(paddle.concat(pooled, axis=1)))


class EncoderClassifier(nn.Layer):
    """A BERT-architecture encoder, the pooled [CLS] state, dropout and a linear layer. With
    ``pretrained`` (a checkpoint directory, or ``all-MiniLM-L6-v2``) the encoder starts from that
    checkpoint and the task encodes text with its tokenizer (fine-tuning); without, ``BertConfig``'s
    fields size a new encoder over the task's characters (``vocab_size``)."""

    def __init__(
        self, vocab_size: int, num_classes: int, dropout: float = 0.1, pretrained: str | None = None, **encoder
    ) -> None:
        super().__init__()
        if pretrained is not None:
            if encoder:
                raise ConfigError(f"Architecture: {sorted(encoder)} size a new encoder; drop them with pretrained")
            self.encoder = load_pretrained(checkpoint_dir(pretrained))[0]
            self.encoder.train()
            config = self.encoder.config
        else:
            try:
                config = BertConfig(vocab_size=vocab_size, **encoder)
            except (TypeError, CheckpointError) as exc:
                raise ConfigError(f"Architecture (EncoderClassifier): {exc}") from None
            self.encoder = BertModel(config)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(config.hidden_size, num_classes)

    def forward(self, input_ids):
        _, pooled = self.encoder(input_ids)  # padding (id 0, the config's pad_token_id) is masked
        return self.fc(self.dropout(pooled))


MODELS = {"CharCNN": CharCNN, "EncoderClassifier": EncoderClassifier}
