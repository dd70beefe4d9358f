"""Embedding: a [num_embeddings, embedding_dim] table looked up by integer ids."""

from __future__ import annotations

import numpy as np

from ...core.tensor import Parameter
from ...ops import embedding as E
from .base import Layer

__all__ = ["Embedding"]


class Embedding(Layer):
    """Weights start Xavier-uniform (Paddle's default) with the padding row zeroed."""

    def __init__(
        self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, *,
        scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None,
        weight_attr=None, name=None,
    ):  # fmt: skip
        super().__init__(dtype=dtype or "float32")
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise ValueError(
                f"Embedding: num_embeddings and embedding_dim must be positive, got {num_embeddings}, {embedding_dim}"
            )
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(
                f"Embedding: padding_idx must be in [{-num_embeddings}, {num_embeddings}), got {padding_idx}"
            )
        self._num_embeddings, self._embedding_dim = num_embeddings, embedding_dim
        self._padding_idx = padding_idx  # as given (Paddle's repr shows it so); embedding() normalises it
        self._max_norm, self._norm_type = max_norm, norm_type
        self._scale_grad_by_freq, self._sparse = scale_grad_by_freq, sparse
        if _weight is not None:
            self.weight = Parameter(np.array(_weight, dtype=self._dtype, copy=True))
        else:
            self.weight = self.create_parameter([num_embeddings, embedding_dim], attr=weight_attr)
            if padding_idx is not None:
                self.weight._data[padding_idx] = 0
        if _freeze:
            self.weight.stop_gradient = True

    def forward(self, x):
        return E.embedding(
            x, self.weight, padding_idx=self._padding_idx, max_norm=self._max_norm, norm_type=self._norm_type,
            sparse=self._sparse, scale_grad_by_freq=self._scale_grad_by_freq,
        )  # fmt: skip

    def extra_repr(self):
        text = f"{self._num_embeddings}, {self._embedding_dim}"
        if self._padding_idx is not None:
            text += f", padding_idx={self._padding_idx}"
        return f"{text}, sparse={self._sparse}, scale_grad_by_freq={self._scale_grad_by_freq}"
