"""Building blocks the CTR models share: the feature embedder and the MLP tower.

Every CTR model takes one float32 matrix ``[N, S + D]``: ``S`` sparse slots holding embedding-row
indices (exact in float32 below 2**24, which ``features`` enforces), then ``D`` dense values. One
input keeps the trainer, the exporter and the predictor program identical to every other task's.
A multi-valued field takes several slots, ``PAD`` (-1) in the unused ones; its slots are pooled
into one field (mean or sum over the slots that hold a value), for the FM, cross and deep parts
alike.
"""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn


class FieldEmbedding(nn.Layer):
    """Per-field embeddings from one shared table (each field's rows at its own offset), as
    PaddleRec's slots share one ``sparse_feature_number`` table; dense fields get one learned
    vector each, scaled by the value (DeepFM's treatment of continuous features).

    ``field_lengths`` gives each sparse field's input slots (1 unless multi-valued) and ``pooling``
    each field's pooling (``mean`` or ``sum``; None for a one-slot field). Without multi-valued
    fields the input's slots are the fields and nothing is pooled.
    """

    def __init__(
        self,
        field_sizes: list[int],
        num_dense: int,
        dim: int,
        sparse: bool = False,
        field_lengths: list[int] | None = None,
        pooling: list[str | None] | None = None,
    ) -> None:
        super().__init__()
        lengths = list(field_lengths or [1] * len(field_sizes))
        pooling = list(pooling or [None] * len(field_sizes))
        if len(lengths) != len(field_sizes) or len(pooling) != len(field_sizes) or min(lengths, default=1) < 1:
            raise ValueError("field_lengths and pooling need one entry per sparse field (lengths >= 1)")
        self.num_sparse, self.num_dense, self.dim = len(field_sizes), num_dense, dim
        self.num_slots = int(sum(lengths))
        slot_field = np.repeat(np.arange(len(field_sizes)), lengths)  # the field of each input slot
        offsets = np.r_[0, np.cumsum(field_sizes)[:-1]].astype(np.int64)
        self.register_buffer("offsets", paddle.to_tensor(offsets[slot_field].reshape(1, -1)))
        last = np.asarray(field_sizes, np.int64)[slot_field].reshape(1, -1) - 1
        self.register_buffer("last", paddle.to_tensor(last))
        self.pooled = any(p is not None for p in pooling)
        if self.pooled:
            single = np.asarray([p is None for p in pooling])[slot_field]
            mean = np.asarray([p == "mean" for p in pooling])[slot_field]
            # [F, S]: which slots make up each field; a slot's weight is 1 / (values in its field) for mean
            self.register_buffer("assign", paddle.to_tensor(np.eye(len(field_sizes), dtype=np.float32)[:, slot_field]))
            self.register_buffer("single", paddle.to_tensor(single.astype(np.float32).reshape(1, -1)))
            self.register_buffer("mean", paddle.to_tensor(mean.astype(np.float32).reshape(1, -1)))
        self.table = nn.Embedding(int(sum(field_sizes)), dim, sparse=sparse)
        self.dense_vectors = self.create_parameter([max(num_dense, 1), dim]) if num_dense else None

    def split(self, x):
        """``(rows [N, S] int64 in the shared table, slot weights [N, S] or None, dense values [N, D])``.

        Ids are clamped into their field (the encoder refuses out-of-range ids before this), so one
        field can never read another's rows, whatever matrix the exported program is given. With
        multi-valued fields each slot gets its pooling weight: 0 for a ``PAD`` (negative) slot of a
        multi-valued field, 1 / (the field's filled slots) under mean pooling, else 1 (a one-value
        field's negative id is clamped to its row 0, as without pooling).
        """
        raw = paddle.cast(x[:, : self.num_slots], "int64")
        rows = paddle.minimum(paddle.clip(raw, min=0), self.last) + self.offsets
        if not self.pooled:
            return rows, None, x[:, self.num_slots :]
        filled = paddle.maximum(paddle.cast(raw >= 0, "float32"), self.single)  # [N, S]
        counts = paddle.matmul(filled, self.assign, transpose_y=True)  # [N, F] values per field
        per_slot = paddle.matmul(paddle.clip(counts, min=1.0), self.assign)  # [N, S] its field's count
        weights = filled / (self.mean * per_slot + (1.0 - self.mean))
        return rows, weights, x[:, self.num_slots :]

    def pool(self, values, weights):
        """Per-slot ``values [N, S, k]`` -> per-field ``[N, F, k]`` (weighted sums over each field's slots)."""
        if weights is None:
            return values
        return paddle.matmul(self.assign, values * paddle.unsqueeze(weights, -1))

    def lookup(self, rows, weights):
        """The sparse fields' embeddings ``[N, F, dim]`` (multi-valued fields pooled)."""
        return self.pool(self.table(rows), weights)

    def forward(self, rows, weights, dense):
        """Field embeddings ``[N, F, dim]`` (sparse fields then dense ones) of ``split``'s parts (a
        model splits its input once and hands them to this layer and its first-order term)."""
        fields = self.lookup(rows, weights)
        if self.num_dense:
            scaled = paddle.unsqueeze(dense, -1) * self.dense_vectors  # [N, D, 1] * [D, dim]
            fields = paddle.concat([fields, scaled], axis=1)
        return fields


class Linear1(nn.Layer):
    """The first-order (wide) term: one weight per sparse row (a multi-valued field's rows weighted
    by their pooling) plus a linear map of the dense values."""

    def __init__(self, embedder: FieldEmbedding, sparse: bool = False) -> None:
        super().__init__()
        self.embedder = embedder
        self.weights = nn.Embedding(embedder.table._num_embeddings, 1, sparse=sparse)
        self.dense = nn.Linear(embedder.num_dense, 1) if embedder.num_dense else None

    def forward(self, rows, weights, dense):
        """``[N, 1]`` from ``FieldEmbedding.split``'s ``(rows, weights, dense)``."""
        terms = self.weights(rows)  # [N, S, 1]
        out = paddle.sum(terms if weights is None else terms * paddle.unsqueeze(weights, -1), axis=1)
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
