"""The Transformer decoder and the full encoder-decoder Transformer, on the encoder's
MultiHeadAttention, with Paddle's parameter names (self_attn, cross_attn, linear1/2, norm1-3)."""

from __future__ import annotations

import copy

import numpy as np

from ...core.tensor import Tensor
from ...ops import activation as act
from .base import Layer
from .common import Linear
from .containers import LayerList
from .dropout import Dropout
from .norm import LayerNorm
from .transformer import MultiHeadAttention, TransformerEncoder, TransformerEncoderLayer

__all__ = ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


def _attr_list(attr, n: int, who: str) -> list:
    """Paddle's rule: one attr for every sub-block, or a list of exactly ``n`` (or 1)."""
    if isinstance(attr, list | tuple):
        if len(attr) == 1:
            return list(attr) * n
        if len(attr) != n:
            raise ValueError(f"{who}: a list of attrs must have 1 or {n} entries, got {len(attr)}")
        return list(attr)
    return [attr] * n


class TransformerDecoderLayer(Layer):
    """Self-attention, cross-attention over the encoder memory, then a feed-forward block; each with
    residual, dropout and LayerNorm (post-norm by default, pre-norm with ``normalize_before``)."""

    def __init__(
        self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1, activation: str = "relu",
        attn_dropout=None, act_dropout=None, normalize_before: bool = False, weight_attr=None, bias_attr=None,
        layer_norm_eps: float = 1e-5,
    ) -> None:  # fmt: skip
        super().__init__()
        self._config = dict(
            d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
            attn_dropout=attn_dropout, act_dropout=act_dropout, normalize_before=normalize_before,
            weight_attr=weight_attr, bias_attr=bias_attr, layer_norm_eps=layer_norm_eps,
        )  # fmt: skip
        if activation not in ("relu", "gelu"):
            raise ValueError(f"TransformerDecoderLayer: activation must be 'relu' or 'gelu', got {activation!r}")
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        weights = _attr_list(weight_attr, 3, "TransformerDecoderLayer weight_attr")
        biases = _attr_list(bias_attr, 3, "TransformerDecoderLayer bias_attr")
        self.normalize_before = normalize_before
        self.self_attn = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=weights[0], bias_attr=biases[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, attn_dropout, weight_attr=weights[1], bias_attr=biases[1])
        self.linear1 = Linear(d_model, dim_feedforward, weights[2], biases[2])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, weights[2], biases[2])
        self.norm1 = LayerNorm(d_model, epsilon=layer_norm_eps)
        self.norm2 = LayerNorm(d_model, epsilon=layer_norm_eps)
        self.norm3 = LayerNorm(d_model, epsilon=layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.dropout3 = Dropout(dropout, mode="upscale_in_train")
        self.activation = getattr(act, activation)

    _block = TransformerEncoderLayer._block

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        tgt = self._block(tgt, self.norm1, lambda y: self.self_attn(y, y, y, tgt_mask), self.dropout1)
        tgt = self._block(tgt, self.norm2, lambda y: self.cross_attn(y, memory, memory, memory_mask), self.dropout2)
        return self._block(
            tgt, self.norm3, lambda y: self.linear2(self.dropout(self.activation(self.linear1(y)))), self.dropout3
        )


class TransformerDecoder(Layer):
    """``num_layers`` decoder layers: the given one first, then fresh copies of its configuration."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm=None) -> None:
        super().__init__()
        layers = [decoder_layer] + [
            type(decoder_layer)(**copy.deepcopy(decoder_layer._config)) for _ in range(num_layers - 1)
        ]
        self.layers = LayerList(layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, cache=None):
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask, memory_mask)
        return self.norm(out) if self.norm is not None else out


class Transformer(Layer):
    """Encoder-decoder Transformer (Vaswani et al.), each stack ending in a LayerNorm, as Paddle builds it."""

    def __init__(
        self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
        dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = "relu", attn_dropout=None,
        act_dropout=None, normalize_before: bool = False, weight_attr=None, bias_attr=None, custom_encoder=None,
        custom_decoder=None,
    ) -> None:  # fmt: skip
        super().__init__()
        if isinstance(weight_attr, list | tuple) or isinstance(bias_attr, list | tuple):
            raise ValueError(
                "Transformer: pass one weight_attr/bias_attr for every sub-layer (lists of attrs are accepted by "
                "TransformerEncoderLayer/TransformerDecoderLayer; build those and pass custom_encoder/custom_decoder)"
            )
        common = dict(
            d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
            attn_dropout=attn_dropout, act_dropout=act_dropout, normalize_before=normalize_before,
            weight_attr=weight_attr, bias_attr=bias_attr,
        )  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(**common), num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(**common), num_decoder_layers, LayerNorm(d_model))
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None):
        memory = self.encoder(src, src_mask=src_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    def generate_square_subsequent_mask(self, length: int) -> Tensor:
        """A float mask with -inf above the diagonal: position i attends to positions <= i."""
        return Tensor._wrap(np.triu(np.full((length, length), -np.inf, dtype=np.float32), 1))
