"""Building blocks the CTR models share: the feature embedder and the MLP tower.

Every CTR model takes one float32 matrix ``[N, S + D]``: ``S`` sparse slots holding embedding-row
indices (exact in float32 below 2**24, which ``features`` enforces), then ``D`` dense values. One
input keeps the trainer, the exporter and the predictor program identical to every other task's.
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn


class FieldEmbedding(nn.Layer):
    """Per-field embeddings from one shared table (each field's rows at its own offset), as
    PaddleRec's slots share one ``sparse_feature_number`` table; dense fields get one learned
    vector each, scaled by the value (DeepFM's treatment of continuous features)."""

    def __init__(self, field_sizes: list[int], num_dense: int, dim: int, sparse: bool = False) -> None:
        super().__init__()
        self.num_sparse, self.num_dense, self.dim = len(field_sizes), num_dense, dim
        offsets = np.r_[0, np.cumsum(field_sizes)[:-1]].astype(np.int64)
        self.register_buffer("offsets", paddle.to_tensor(offsets.reshape(1, -1)))
        self.register_buffer("last", paddle.to_tensor(np.asarray(field_sizes, np.int64).reshape(1, -1) - 1))
        self.table = nn.Embedding(int(sum(field_sizes)), dim, sparse=sparse)
        self.dense_vectors = self.create_parameter([max(num_dense, 1), dim]) if num_dense else None

    def split(self, x):
        """``(rows [N, S] int64 in the shared table, dense values [N, D])``.

        Ids are clamped into their field (the encoder refuses out-of-range ids before this), so one
        field can never read another's rows, whatever matrix the exported program is given.
        """
        ids = paddle.minimum(paddle.clip(paddle.cast(x[:, : self.num_sparse], "int64"), min=0), self.last)
        rows = ids + self.offsets
        return rows, x[:, self.num_sparse :]

    def forward(self, rows, dense):
        """Field embeddings ``[N, F, dim]`` (sparse fields then dense ones) of ``split``'s halves (a
        model splits its input once and hands the halves to this layer and its first-order term)."""
        fields = self.table(rows)
        if self.num_dense:
            scaled = paddle.unsqueeze(dense, -1) * self.dense_vectors  # [N, D, 1] * [D, dim]
            fields = paddle.concat([fields, scaled], axis=1)
        return fields


class Linear1(nn.Layer):
    """The first-order (wide) term: one weight per sparse row plus a linear map of the dense values."""

    def __init__(self, embedder: FieldEmbedding, sparse: bool = False) -> None:
        super().__init__()
        self.embedder = embedder
        self.weights = nn.Embedding(embedder.table._num_embeddings, 1, sparse=sparse)
        self.dense = nn.Linear(embedder.num_dense, 1) if embedder.num_dense else None

    def forward(self, rows, dense):
        """``[N, 1]`` from ``FieldEmbedding.split``'s ``(rows, dense)``."""
        out = paddle.sum(self.weights(rows), axis=1)
        return out + self.dense(dense) if self.dense is not None else out


def mlp(in_features: int, hidden_sizes: list[int], dropout: float = 0.0) -> nn.Sequential:
    """ReLU layers of ``hidden_sizes`` (the deep tower, PaddleRec's ``fc_sizes``)."""
    layers: list = []
    for size in hidden_sizes:
        layers += [nn.Linear(in_features, size), nn.ReLU()]
        if dropout:
            layers.append(nn.Dropout(dropout))
        in_features = size
    return nn.Sequential(*layers)
