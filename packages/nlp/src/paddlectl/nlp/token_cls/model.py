"""CRF taggers over character ids (0 = padding): a BiLSTM-CRF and a BERT-architecture encoder + CRF.

The trainer hands a model's one output tensor to the loss, the metrics and serving, so a tagger's
output packs what the CRF needs along the sequence axis: ``[batch, T + num_tags + 3, num_tags]`` =
the emissions (T rows), the CRF weights in ``paddle.text.linear_chain_crf``'s layout (start row,
stop row, tag-to-tag rows; the same in every batch entry) and a row holding the sequence length
(column 0). ``unpack`` splits it again, for Tensors and arrays alike.
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import CheckpointError, ConfigError, DataError

from ..crf import LinearChainCrf
from ..encoder import BertConfig, BertModel


def unpack(packed):
    """``(emissions [B, T, N], weights [N + 2, N], lengths [B] int64)`` of a tagger's output."""
    if len(packed.shape) != 3 or packed.shape[1] < packed.shape[2] + 4:
        raise DataError(f"a tagger's output is [batch, T + num_tags + 3, num_tags], got {list(packed.shape)}")
    tags = packed.shape[2]
    steps = packed.shape[1] - tags - 3
    lengths = packed[:, -1, 0]
    lengths = lengths.astype("int64") if isinstance(lengths, paddle.Tensor) else np.rint(lengths).astype(np.int64)
    return packed[:, :steps], packed[0, steps : steps + tags + 2], lengths


class CrfTagger(nn.Layer):
    """A sequence encoder (``encode(ids) -> [B, T, features]``), a linear layer to tag scores and a
    ``LinearChainCrf`` (PaddleNLP's, with start/stop tags) over them."""

    def __init__(self, features: int, num_labels: int, crf_lr: float) -> None:
        super().__init__()
        self.crf = LinearChainCrf(num_labels, crf_lr=crf_lr, with_start_stop_tag=True)
        self.fc = nn.Linear(features, self.crf.num_tags)

    def encode(self, input_ids):
        raise NotImplementedError

    def forward(self, input_ids):
        emissions = self.fc(self.encode(input_ids))
        lengths = (input_ids != 0).astype(emissions.dtype).sum(axis=1)
        weights = emissions[:, :1, :1] * 0 + self.crf.weights().unsqueeze(0)  # one copy per entry: [B, N + 2, N]
        first = (paddle.arange(self.crf.num_tags) == 0).astype(emissions.dtype)
        length_row = lengths.unsqueeze(1).unsqueeze(2) * first
        return paddle.concat([emissions, weights, length_row], axis=1)


class BiLSTMCrf(CrfTagger):
    """Character embeddings, a bidirectional LSTM (``num_layers`` deep), a CRF."""

    def __init__(
        self,
        vocab_size: int,
        num_labels: int,
        embed_dim: int = 64,
        hidden_size: int = 96,
        num_layers: int = 1,
        dropout: float = 0.1,
        crf_lr: float = 1.0,
    ) -> None:
        super().__init__(2 * hidden_size, num_labels, crf_lr)
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, direction="bidirect")
        self.dropout = nn.Dropout(dropout)

    def encode(self, input_ids):
        # No sequence_length: the framework's LSTM reads it as an array, which a traced (exported)
        # model cannot; the padding (a zero embedding) runs through both directions, the same in
        # training and serving, and the CRF ignores the padded positions.
        out, _ = self.lstm(self.dropout(self.embedding(input_ids)))
        return self.dropout(out)


class ConvCrf(CrfTagger):
    """Character embeddings, ``num_layers`` residual 1-D convolutions (each sees ``kernel_size``
    neighbours, so the stack sees ``num_layers * (kernel_size - 1) + 1`` characters), a CRF. Much
    cheaper per step than the BiLSTM on the framework's CPU kernels."""

    def __init__(
        self,
        vocab_size: int,
        num_labels: int,
        embed_dim: int = 128,
        num_layers: int = 3,
        kernel_size: int = 3,
        dropout: float = 0.1,
        crf_lr: float = 1.0,
    ) -> None:
        if isinstance(kernel_size, bool) or not isinstance(kernel_size, int) or kernel_size < 1 or kernel_size % 2 == 0:
            raise ConfigError(f"ConvCrf.kernel_size must be an odd positive integer, got {kernel_size!r}")
        super().__init__(embed_dim, num_labels, crf_lr)
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.convs = nn.LayerList(
            [nn.Conv1D(embed_dim, embed_dim, kernel_size, padding=kernel_size // 2) for _ in range(num_layers)]
        )
        self.dropout = nn.Dropout(dropout)

    def encode(self, input_ids):
        x = self.dropout(self.embedding(input_ids)).transpose([0, 2, 1])
        for conv in self.convs:
            x = x + self.dropout(paddle.nn.functional.relu(conv(x)))
        return x.transpose([0, 2, 1])


class EncoderCrf(CrfTagger):
    """A BERT-architecture encoder over the characters (sized by ``BertConfig``'s fields), a CRF."""

    def __init__(self, vocab_size: int, num_labels: int, dropout: float = 0.1, crf_lr: float = 1.0, **encoder) -> None:
        try:
            config = BertConfig(vocab_size=vocab_size, **encoder)
        except (TypeError, CheckpointError) as exc:
            raise ConfigError(f"Architecture (EncoderCrf): {exc}") from None
        super().__init__(config.hidden_size, num_labels, crf_lr)
        self.encoder = BertModel(config)
        self.dropout = nn.Dropout(dropout)

    def encode(self, input_ids):
        return self.dropout(self.encoder(input_ids)[0])


MODELS = {"BiLSTMCrf": BiLSTMCrf, "ConvCrf": ConvCrf, "EncoderCrf": EncoderCrf}
