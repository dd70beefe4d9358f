"""The CTR models: Wide&Deep, DeepFM and DCN, each returning the click probability ``[N, 1]``.

Semantics follow the papers as PaddleRec implements them (models/rank/wide_deep, deepfm, dcn):
a first-order term over one-hot features, a second-order or cross term, and an MLP tower.
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.nn import functional as F

from .layers import FieldEmbedding, Linear1, mlp

__all__ = ["DCN", "MODELS", "DeepFM", "WideDeep"]


class _CtrModel(nn.Layer):
    """``field_lengths`` / ``pooling``: the sparse fields' input slots and pooling (``FieldEmbedding``);
    the task passes them from the feature lists, a config does not."""

    def __init__(
        self,
        field_sizes,
        num_dense,
        embedding_dim=8,
        hidden_sizes=(64, 32),
        dropout=0.0,
        sparse=False,
        field_lengths=None,
        pooling=None,
    ):
        super().__init__()
        self.embedder = FieldEmbedding(
            list(field_sizes), int(num_dense), int(embedding_dim), bool(sparse), field_lengths, pooling
        )
        self.num_fields = len(field_sizes) + int(num_dense)
        self.flat_width = len(field_sizes) * int(embedding_dim) + int(num_dense)
        self.hidden_sizes, self.dropout = [int(h) for h in hidden_sizes], float(dropout)

    def flat_inputs(self, x):
        """(rows, weights, dense, [every field's embedding flattened, dense]): the last is the deep
        (and cross) part's input, ``flat_width`` wide."""
        rows, weights, dense = self.embedder.split(x)
        embedded = paddle.flatten(self.embedder.lookup(rows, weights), start_axis=1)
        flat = paddle.concat([embedded, dense], axis=1) if self.embedder.num_dense else embedded
        return rows, weights, dense, flat

    def tower(self, in_features: int) -> tuple[nn.Sequential, int]:
        out = self.hidden_sizes[-1] if self.hidden_sizes else in_features
        return mlp(in_features, self.hidden_sizes, self.dropout), out


class WideDeep(_CtrModel):
    """Wide (linear over one-hot sparse and dense features) + deep (MLP over embeddings and dense values)."""

    def __init__(
        self,
        field_sizes,
        num_dense,
        embedding_dim=8,
        hidden_sizes=(64, 32),
        dropout=0.0,
        sparse=False,
        field_lengths=None,
        pooling=None,
    ):
        super().__init__(field_sizes, num_dense, embedding_dim, hidden_sizes, dropout, sparse, field_lengths, pooling)
        self.wide = Linear1(self.embedder, bool(sparse))
        self.deep, out = self.tower(self.flat_width)
        self.head = nn.Linear(out, 1)

    def forward(self, x):
        rows, weights, dense, deep_in = self.flat_inputs(x)
        return F.sigmoid(self.wide(rows, weights, dense) + self.head(self.deep(deep_in)))


class DeepFM(_CtrModel):
    """FM (first order + pairwise interactions of field embeddings) + an MLP on the same embeddings."""

    def __init__(
        self,
        field_sizes,
        num_dense,
        embedding_dim=8,
        hidden_sizes=(64, 32),
        dropout=0.0,
        sparse=False,
        field_lengths=None,
        pooling=None,
    ):
        super().__init__(field_sizes, num_dense, embedding_dim, hidden_sizes, dropout, sparse, field_lengths, pooling)
        self.first = Linear1(self.embedder, bool(sparse))
        self.deep, out = self.tower(self.num_fields * int(embedding_dim))
        self.head = nn.Linear(out, 1)

    def forward(self, x):
        rows, weights, dense = self.embedder.split(x)
        fields = self.embedder(rows, weights, dense)
        summed = paddle.sum(fields, axis=1)
        second = 0.5 * paddle.sum(summed * summed - paddle.sum(fields * fields, axis=1), axis=1, keepdim=True)
        deep = self.head(self.deep(paddle.flatten(fields, start_axis=1)))
        return F.sigmoid(self.first(rows, weights, dense) + second + deep)


class DCN(_CtrModel):
    """Deep & Cross: ``x_{l+1} = x0 * (x_l . w_l) + b_l + x_l`` beside an MLP, both on [embeddings, dense]."""

    def __init__(
        self,
        field_sizes,
        num_dense,
        embedding_dim=8,
        hidden_sizes=(64, 32),
        dropout=0.0,
        sparse=False,
        cross_layers=2,
        field_lengths=None,
        pooling=None,
    ):
        super().__init__(field_sizes, num_dense, embedding_dim, hidden_sizes, dropout, sparse, field_lengths, pooling)
        width = self.flat_width
        self.cross_w = nn.LayerList([nn.Linear(width, 1, bias_attr=False) for _ in range(int(cross_layers))])
        self.cross_b = nn.ParameterList(
            [self.create_parameter([width], is_bias=True) for _ in range(int(cross_layers))]
        )
        self.deep, out = self.tower(width)
        self.head = nn.Linear(width + out, 1)

    def forward(self, x):
        *_, x0 = self.flat_inputs(x)
        crossed = x0
        for w, b in zip(self.cross_w, self.cross_b, strict=True):
            crossed = x0 * w(crossed) + b + crossed
        return F.sigmoid(self.head(paddle.concat([crossed, self.deep(x0)], axis=1)))


MODELS = {"WideDeep": WideDeep, "DeepFM": DeepFM, "DCN": DCN}
