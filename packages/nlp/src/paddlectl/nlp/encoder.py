"""BERT/ERNIE encoder from the framework's layers, with PaddleNLP's parameter names.

Embeddings (word + position + token type, LayerNorm, dropout), ``num_hidden_layers`` post-norm
``nn.TransformerEncoderLayer`` blocks with GELU (so the predictor's ``fuse_attention`` pass sees
``nn.MultiHeadAttention``'s traced chain) and a tanh pooler over the first token. Position ids come
from a cumulative sum over the ids, not ``arange(seq_len)``, so the model traces with a symbolic
batch and sequence length.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.errors import CheckpointError, DataError

from .jsonfile import read_json

__all__ = ["BertConfig", "BertEmbeddings", "BertPooler", "BertModel", "FEEDS", "input_spec"]

_ACTIVATIONS = ("gelu", "relu")
FEEDS = ("input_ids", "token_type_ids", "attention_mask")
_MASKED = -1e4  # PaddleNLP's additive mask: exp(-1e4 - max) is 0 in float32, and no inf - inf = nan


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The architecture of a BERT/ERNIE checkpoint (``config.json``'s names; others are ignored)."""

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    model_type: str = "bert"

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                     "max_position_embeddings", "type_vocab_size"):  # fmt: skip
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CheckpointError(f"BertConfig: {name} must be a positive int, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise CheckpointError(
                f"BertConfig: hidden_size {self.hidden_size} is not divisible by "
                f"num_attention_heads {self.num_attention_heads}"
            )
        if self.hidden_act not in _ACTIVATIONS:
            raise CheckpointError(f"BertConfig: hidden_act must be one of {_ACTIVATIONS}, got {self.hidden_act!r}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if not isinstance(getattr(self, name), int | float) or not 0 <= getattr(self, name) < 1:
                raise CheckpointError(f"BertConfig: {name} must be in [0, 1), got {getattr(self, name)!r}")
        if not isinstance(self.layer_norm_eps, int | float) or not 0 < self.layer_norm_eps < 1:
            raise CheckpointError(f"BertConfig: layer_norm_eps must be in (0, 1), got {self.layer_norm_eps!r}")
        if not isinstance(self.pad_token_id, int) or not 0 <= self.pad_token_id < self.vocab_size:
            raise CheckpointError(f"BertConfig: pad_token_id must be an id below vocab_size, got {self.pad_token_id!r}")

    @classmethod
    def from_dict(cls, data: dict) -> BertConfig:
        """The known keys of a Hugging Face/PaddleNLP config; a non-absolute position encoding is refused."""
        if not isinstance(data, dict):
            raise CheckpointError(f"BertConfig: expected a JSON object, got {type(data).__name__}")
        kind = data.get("position_embedding_type", "absolute")
        if kind != "absolute":
            raise CheckpointError(f"BertConfig: position_embedding_type {kind!r} is not supported (only 'absolute')")
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in fields and v is not None})

    @classmethod
    def from_json(cls, path) -> BertConfig:
        return cls.from_dict(read_json(path, required=True))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class BertEmbeddings(nn.Layer):
    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.layer_norm = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids=None):
        ones = paddle.ones_like(input_ids)
        position_ids = paddle.cumsum(ones, axis=-1) - ones
        if token_type_ids is None:
            token_type_ids = paddle.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        x = x + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.layer_norm(x))


class BertPooler(nn.Layer):
    """tanh(W h_[CLS] + b): BERT's next-sentence head, the sentence vector of classification heads."""

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


class BertModel(nn.Layer):
    """``model(input_ids, token_type_ids=None, attention_mask=None) -> (sequence_output, pooled_output)``.

    ``attention_mask`` is [batch, seq] with 1 for tokens and 0 for padding; without it the pad id's
    positions are masked (PaddleNLP's rule). ``output_hidden_states=True`` adds a third item, the
    embeddings' output and each layer's (``num_hidden_layers + 1`` tensors, as transformers gives).
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        if not isinstance(config, BertConfig):
            raise CheckpointError(f"BertModel: config must be a BertConfig, got {type(config).__name__}")
        self.config = config
        self.embeddings = BertEmbeddings(config)
        layer = nn.TransformerEncoderLayer(
            config.hidden_size,
            config.num_attention_heads,
            config.intermediate_size,
            dropout=config.hidden_dropout_prob,
            activation=config.hidden_act,
            attn_dropout=config.attention_probs_dropout_prob,
            act_dropout=0.0,
            layer_norm_eps=config.layer_norm_eps,
        )
        self.encoder = nn.TransformerEncoder(layer, config.num_hidden_layers)
        self.pooler = BertPooler(config.hidden_size)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_hidden_states: bool = False):
        self._check(input_ids, token_type_ids, attention_mask)
        if attention_mask is None:
            keep = paddle.cast(input_ids != self.config.pad_token_id, "float32")
        else:
            keep = paddle.cast(attention_mask, "float32")
        mask = paddle.unsqueeze((1.0 - keep) * _MASKED, axis=[1, 2])
        hidden = self.embeddings(input_ids, token_type_ids)
        states = [hidden]
        for layer in self.encoder.layers:
            hidden = layer(hidden, mask)
            states.append(hidden)
        pooled = self.pooler(hidden)
        return (hidden, pooled, states) if output_hidden_states else (hidden, pooled)

    def _check(self, input_ids, token_type_ids, attention_mask) -> None:
        """Shapes and dtypes up front, as one-line errors (a symbolic length is checked when fed)."""
        if not isinstance(input_ids, paddle.Tensor) or input_ids.ndim != 2:
            raise DataError(f"BertModel: input_ids must be a [batch, seq] tensor, got {_describe(input_ids)}")
        if np.dtype(input_ids.dtype).kind not in "iu":
            raise DataError(f"BertModel: input_ids must be integer ids, got {np.dtype(input_ids.dtype).name}")
        length = input_ids.shape[1]
        if isinstance(length, int) and length > self.config.max_position_embeddings:
            raise DataError(
                f"BertModel: sequence of {length} tokens is longer than the model's "
                f"{self.config.max_position_embeddings} positions; truncate the input"
            )
        for name, other in (("token_type_ids", token_type_ids), ("attention_mask", attention_mask)):
            if other is not None and (
                not isinstance(other, paddle.Tensor) or tuple(other.shape) != tuple(input_ids.shape)
            ):
                raise DataError(
                    f"BertModel: {name} must be a tensor shaped like input_ids {list(input_ids.shape)}, "
                    f"got {_describe(other)}"
                )


def input_spec(feeds=FEEDS) -> list:
    """int64 [batch, seq] InputSpecs for ``paddle.jit.save``, all sharing the symbols ``batch`` and
    ``seq``: a ``None`` per feed would give each its own length, and their embeddings would not add."""
    from paddlectl.framework.jit import InputSpec

    unknown = [f for f in feeds if f not in FEEDS]
    if unknown or not feeds or feeds[0] != "input_ids":
        raise DataError(f"input_spec: feeds must start with input_ids and be among {list(FEEDS)}, got {list(feeds)}")
    return [InputSpec(["batch", "seq"], "int64", name) for name in feeds]


def _describe(value) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {list(shape)}" if shape is not None else type(value).__name__
