"""A small GPT-style decoder (GPT-2's layout: pre-norm blocks, learned positions, causal attention,
optionally tied input/output embeddings) on the framework's layers.

``forward(input_ids)`` returns the logits ``[batch, seq, vocab]`` and traces with a symbolic batch
and sequence length: positions and the causal mask are computed from the input by tensor ops
(cumsum of ones, a broadcast comparison), never from a Python size, so one exported program
serves every length. ``forward(input_ids, cache=..., use_cache=True)`` also returns each layer's
keys and values so ``generation.generate`` feeds only the newest token per step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from paddlectl.framework import nn
from paddlectl.framework.core.tensor import Tensor
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.nn.initializer import Normal
from paddlectl.framework.ops import activation as act
from paddlectl.framework.ops.attention import scaled_dot_product_attention
from paddlectl.framework.ops.creation import ones_like
from paddlectl.framework.ops.elementwise import cast
from paddlectl.framework.ops.linalg import matmul
from paddlectl.framework.ops.scan import cumsum
from paddlectl.framework.ops.shape import concat, reshape, split, unsqueeze

MASKED = -1e9  # added to the scores of future keys: exp() of it underflows to 0 in float32


@dataclass(frozen=True)
class GPTConfig:
    """The decoder's sizes; GPT-2's names (``n_positions`` is the longest sequence it attends over)."""

    vocab_size: int
    hidden_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    intermediate_size: int | None = None  # 4 * hidden_size, as GPT-2
    max_position_embeddings: int = 128
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    tie_word_embeddings: bool = True

    def __post_init__(self) -> None:
        sizes = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "max_position_embeddings")
        for name in sizes:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"GPT {name} must be a positive integer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"GPT hidden_size {self.hidden_size} is not a multiple of num_attention_heads "
                f"{self.num_attention_heads}; choose sizes that divide"
            )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if not 0.0 <= float(getattr(self, name)) < 1.0:
                raise ConfigError(f"GPT {name} must be in [0, 1), got {getattr(self, name)!r}")

    @property
    def ffn_size(self) -> int:
        return self.intermediate_size or 4 * self.hidden_size

    def to_dict(self) -> dict:
        return asdict(self)


def _normal(config: GPTConfig):
    return nn.ParamAttr(initializer=Normal(0.0, config.initializer_range))


class CausalSelfAttention(nn.Layer):
    """One projection to queries, keys and values, the framework's scaled_dot_product_attention
    under an additive causal mask, and the output projection."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.qkv_proj = nn.Linear(config.hidden_size, 3 * config.hidden_size, _normal(config))
        self.out_proj = nn.Linear(config.hidden_size, config.hidden_size, _normal(config))
        self.attn_dropout = config.attention_probs_dropout_prob

    def forward(self, x, mask, past=None):
        q, k, v = (reshape(t, [0, 0, self.heads, self.head_dim]) for t in split(self.qkv_proj(x), 3, axis=-1))
        if past is not None:
            k, v = concat([past[0], k], axis=1), concat([past[1], v], axis=1)
        out = scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.attn_dropout if self.training else 0.0, training=self.training
        )
        return self.out_proj(reshape(out, [0, 0, self.heads * self.head_dim])), (k, v)


class DecoderBlock(nn.Layer):
    """GPT-2's pre-norm block: ``x + attn(ln(x))`` then ``x + mlp(ln(x))`` (gelu, tanh form)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)
        self.self_attn = CausalSelfAttention(config)
        self.norm2 = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)
        self.linear1 = nn.Linear(config.hidden_size, config.ffn_size, _normal(config))
        self.linear2 = nn.Linear(config.ffn_size, config.hidden_size, _normal(config))
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, x, mask, past=None):
        attended, present = self.self_attn(self.norm1(x), mask, past)
        x = x + self.dropout(attended)
        x = x + self.dropout(self.linear2(act.gelu(self.linear1(self.norm2(x)), approximate=True)))
        return x, present


class GPTLMHeadModel(nn.Layer):
    """Token and position embeddings, ``num_hidden_layers`` decoder blocks, a final LayerNorm and the
    language-model head (the token embedding transposed when ``tie_word_embeddings``)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, weight_attr=_normal(config))
        self.position_embeddings = nn.Embedding(
            config.max_position_embeddings, config.hidden_size, weight_attr=_normal(config)
        )
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.blocks = nn.LayerList([DecoderBlock(config) for _ in range(config.num_hidden_layers)])
        self.norm = nn.LayerNorm(config.hidden_size, epsilon=config.layer_norm_epsilon)
        self.lm_head = (
            None
            if config.tie_word_embeddings
            else nn.Linear(config.hidden_size, config.vocab_size, _normal(config), bias_attr=False)
        )

    def forward(self, input_ids, cache=None, use_cache: bool = False):
        if cache is not None and len(cache) != len(self.blocks):
            raise DataError(f"the cache holds {len(cache)} layers, the model has {len(self.blocks)}")
        past = 0 if cache is None else int(cache[0][0].shape[1])
        length = past + int(input_ids.shape[1])
        if length > self.config.max_position_embeddings:
            raise DataError(
                f"a sequence of {length} tokens is longer than the model's {self.config.max_position_embeddings} "
                "positions; shorten the prompt or the generation (max_length)"
            )
        positions = cumsum(ones_like(input_ids), axis=1) - 1  # [batch, seq]: 0, 1, ... as tensor ops
        if past:
            positions = positions + past
        x = self.dropout(self.word_embeddings(input_ids) + self.position_embeddings(positions))
        mask = causal_mask(positions, past)
        presents = []
        for i, block in enumerate(self.blocks):
            x, present = block(x, mask, None if cache is None else cache[i])
            presents.append(present)
        x = self.norm(x)
        if self.lm_head is None:
            logits = matmul(x, self.word_embeddings.weight, transpose_y=True)
        else:
            logits = self.lm_head(x)
        return (logits, presents) if use_cache else logits


def causal_mask(positions, past: int):
    """``[batch, 1, seq, past + seq]`` additive mask: 0 where the key is at or before the query,
    MASKED after it. Without a cache the keys are the queries' own positions (a tensor), so the
    mask follows a symbolic sequence length; with one, the earlier keys are positions ``0..past-1``."""
    keys = positions
    if past:
        earlier = Tensor._wrap(np.broadcast_to(np.arange(past, dtype=np.int64), (positions.shape[0], past)).copy())
        keys = concat([earlier, positions], axis=1)
    future = cast(unsqueeze(keys, [1, 2]) > unsqueeze(positions, [1, 3]), "float32")
    return future * MASKED


__all__ = ["CausalSelfAttention", "DecoderBlock", "GPTConfig", "GPTLMHeadModel", "causal_mask"]
