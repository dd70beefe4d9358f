"""MultiHeadAttention and the Transformer encoder, with Paddle's parameter names and defaults."""

from __future__ import annotations

import copy

import numpy as np

from ...core.tensor import Tensor
from ...errors import ShapeError
from ...ops import activation as act
from ...ops.dropout import dropout
from ...ops.elementwise import cast
from ...ops.linalg import matmul
from ...ops.shape import reshape, transpose
from .base import Layer
from .common import Linear
from .containers import LayerList
from .dropout import Dropout
from .norm import LayerNorm

__all__ = ["MultiHeadAttention", "TransformerEncoderLayer", "TransformerEncoder"]


def _additive_mask(mask, dtype) -> Tensor | None:
    """Paddle's convention: a bool/int mask keeps True/1 and blocks the rest with -1e9; a float mask
    is added. Tensor ops, so a mask fed to an exported model traces (reading it would not)."""
    if mask is None:
        return None
    mask = mask if isinstance(mask, Tensor) else Tensor._wrap(np.asarray(mask))
    if np.dtype(mask.dtype).kind in "biu":
        return (cast(mask, dtype) - 1.0) * 1e9
    return mask if mask.dtype == dtype else cast(mask, dtype)


class MultiHeadAttention(Layer):
    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        kdim=None,
        vdim=None,
        need_weights: bool = False,
        weight_attr=None,
        bias_attr=None,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})"
            )
        self.embed_dim, self.num_heads, self.dropout, self.need_weights = embed_dim, num_heads, dropout, need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr)
        self.k_proj = Linear(kdim or embed_dim, embed_dim, weight_attr, bias_attr)
        self.v_proj = Linear(vdim or embed_dim, embed_dim, weight_attr, bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr)

    def _heads(self, x):
        return transpose(reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def forward(self, query, key=None, value=None, attn_mask=None, cache=None):
        key = query if key is None else key
        value = query if value is None else value
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise ShapeError(f"MultiHeadAttention: query must be [batch, seq, {self.embed_dim}], got {query.shape}")
        q = self._heads(self.q_proj(query))
        k = self._heads(self.k_proj(key))
        v = self._heads(self.v_proj(value))
        scores = matmul(q * (self.head_dim**-0.5), k, transpose_y=True)
        mask = _additive_mask(attn_mask, scores.dtype)
        if mask is not None:
            scores = scores + mask
        weights = act.softmax(scores, axis=-1)
        if self.dropout:
            weights = dropout(weights, self.dropout, training=self.training, mode="upscale_in_train")
        out = reshape(transpose(matmul(weights, v), [0, 2, 1, 3]), [0, 0, self.embed_dim])
        out = self.out_proj(out)
        return (out, weights) if self.need_weights else out


class TransformerEncoderLayer(Layer):
    """Self-attention then a feed-forward block, each with residual, dropout and LayerNorm
    (post-norm by default, pre-norm with ``normalize_before``)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int,
        dropout: float = 0.1,
        activation: str = "relu",
        attn_dropout=None,
        act_dropout=None,
        normalize_before: bool = False,
        weight_attr=None,
        bias_attr=None,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self._config = dict(
            d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
            attn_dropout=attn_dropout, act_dropout=act_dropout, normalize_before=normalize_before,
            weight_attr=weight_attr, bias_attr=bias_attr, layer_norm_eps=layer_norm_eps,
        )  # fmt: skip
        if activation not in ("relu", "gelu"):
            raise ValueError(f"TransformerEncoderLayer: activation must be 'relu' or 'gelu', got {activation!r}")
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        self.self_attn = MultiHeadAttention(
            d_model, nhead, dropout=attn_dropout, weight_attr=weight_attr, bias_attr=bias_attr
        )
        self.linear1 = Linear(d_model, dim_feedforward, weight_attr, bias_attr)
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weight_attr, bias_attr)
        self.norm1 = LayerNorm(d_model, epsilon=layer_norm_eps)
        self.norm2 = LayerNorm(d_model, epsilon=layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.activation = getattr(act, activation)

    def _block(self, x, norm, body, drop):
        y = norm(x) if self.normalize_before else x
        y = x + drop(body(y))
        return y if self.normalize_before else norm(y)

    def forward(self, src, src_mask=None, cache=None):
        src = self._block(src, self.norm1, lambda y: self.self_attn(y, y, y, src_mask), self.dropout1)
        return self._block(
            src, self.norm2, lambda y: self.linear2(self.dropout(self.activation(self.linear1(y)))), self.dropout2
        )


class TransformerEncoder(Layer):
    """``num_layers`` encoder layers: the given one first, then fresh copies of its configuration."""

    def __init__(
        self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm=None, enable_recompute: bool = False
    ) -> None:
        super().__init__()
        layers = [encoder_layer] + [
            type(encoder_layer)(**copy.deepcopy(encoder_layer._config)) for _ in range(num_layers - 1)
        ]
        self.layers = LayerList(layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, src_mask=None, cache=None):
        out = src
        for layer in self.layers:
            out = layer(out, src_mask)
        return self.norm(out) if self.norm is not None else out
