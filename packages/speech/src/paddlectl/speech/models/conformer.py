"""A small Conformer encoder for CTC (Gulati et al.; wenet's ``ConformerEncoder``) that can run in
chunks: macaron feed-forward halves around self-attention and a convolution module per block.

Streaming needs every frame to see the same context in chunks as in one pass, so the design
restricts context instead of approximating it: the depthwise convolution is causal (its state is the
last ``kernel_size - 1`` frames), attention is limited by a chunk mask (a frame sees its own chunk
and ``left_chunks`` chunks before it; -1 = all), and positions are absolute. Training draws a chunk
size per batch (wenet's dynamic chunk training) so one model serves full-utterance and chunked
decoding. ``streaming.stream_encode`` feeds chunks with key/value and convolution caches.
"""

from __future__ import annotations

import math
import random

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.nn import functional as F

from .layers import Conv2dSubsampling4, sinusoidal_positions


def chunk_mask(frames: int, chunk_size: int, left_chunks: int = -1) -> np.ndarray:
    """Additive [frames, frames] attention mask: 0 where frame i may see frame j (j's chunk is i's or
    one of the ``left_chunks`` before it; all earlier ones when -1), -1e9 elsewhere."""
    chunk = np.arange(frames) // chunk_size
    seen = chunk[None, :] <= chunk[:, None]
    if left_chunks >= 0:
        seen &= chunk[None, :] >= chunk[:, None] - left_chunks
    return np.where(seen, 0.0, -1e9).astype("float32")


class FeedForward(nn.Layer):
    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.w1, self.w2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.w2(self.dropout(F.silu(self.w1(x))))


class SelfAttention(nn.Layer):
    """Multi-head attention that also takes the keys/values of earlier chunks and returns its own."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} is not a multiple of heads {heads}")
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v, self.out = (nn.Linear(dim, dim) for _ in range(4))
        self.dropout = nn.Dropout(dropout)

    def _split(self, x):
        return paddle.transpose(paddle.reshape(x, [0, 0, self.heads, self.head_dim]), [0, 2, 1, 3])

    def forward(self, x, mask=None, cache=None):
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), self._split(self.v(x))
        if cache is not None:
            k, v = paddle.concat([cache[0], k], axis=2), paddle.concat([cache[1], v], axis=2)
        scores = paddle.matmul(q, k, transpose_y=True) * (1.0 / math.sqrt(self.head_dim))
        if mask is not None:
            scores = scores + mask
        context = paddle.matmul(self.dropout(F.softmax(scores, axis=-1)), v)
        context = paddle.reshape(paddle.transpose(context, [0, 2, 1, 3]), [0, 0, self.heads * self.head_dim])
        return self.out(context), (k, v)


class ConvModule(nn.Layer):
    """Pointwise + GLU, causal depthwise convolution, LayerNorm (not BatchNorm: per frame, so a chunk
    normalises as the whole utterance does), Swish, pointwise."""

    def __init__(self, dim: int, kernel_size: int) -> None:
        super().__init__()
        if not isinstance(kernel_size, int) or kernel_size < 1:
            raise ValueError(f"kernel_size must be a positive integer, got {kernel_size!r}")
        self.context = kernel_size - 1
        self.pointwise_in = nn.Linear(dim, 2 * dim)
        self.depthwise = nn.Conv1D(dim, dim, kernel_size, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pointwise_out = nn.Linear(dim, dim)

    def forward(self, x, cache=None):
        x = paddle.transpose(F.glu(self.pointwise_in(x), axis=-1), [0, 2, 1])  # [B, D, T]
        if cache is None:  # a whole utterance: zeros before the first frame, no state to keep
            x, state = F.pad(x, [self.context, 0], data_format="NCL"), None
        else:
            x = paddle.concat([cache, x], axis=2)
            state = x[:, :, x.shape[2] - self.context :]
        x = paddle.transpose(self.depthwise(x), [0, 2, 1])
        return self.pointwise_out(F.silu(self.norm(x))), state


class ConformerBlock(nn.Layer):
    def __init__(self, dim: int, heads: int, ffn_dim: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        self.ff1, self.ff2 = FeedForward(dim, ffn_dim, dropout), FeedForward(dim, ffn_dim, dropout)
        self.attn = SelfAttention(dim, heads, dropout)
        self.conv = ConvModule(dim, kernel_size)
        self.norms = nn.LayerList([nn.LayerNorm(dim) for _ in range(5)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None, att_cache=None, conv_cache=None):
        """``(x, (keys, values), conv state)``; the caches are None in a full-utterance pass."""
        x = x + 0.5 * self.dropout(self.ff1(self.norms[0](x)))
        attended, kv = self.attn(self.norms[1](x), mask, att_cache)
        x = x + self.dropout(attended)
        convolved, state = self.conv(self.norms[2](x), conv_cache)
        x = x + self.dropout(convolved)
        x = x + 0.5 * self.dropout(self.ff2(self.norms[3](x)))
        return self.norms[4](x), kv, state


class Conformer(nn.Layer):
    """[B, T, F] features -> [B, (T-7)//4+1, dim] encodings.

    ``chunk_size`` (encoder frames, 0 = whole utterance) and ``left_chunks`` are the decoding
    settings of a chunked pass; in training, ``dynamic_chunk`` draws a chunk size per batch (1 to
    ``max_chunk``, or the whole utterance half of the time) as wenet does.
    """

    def __init__(
        self,
        in_dim: int,
        dim: int = 144,
        heads: int = 4,
        ffn_dim: int = 576,
        num_blocks: int = 4,
        kernel_size: int = 15,
        conv_channels: int = 32,
        dropout: float = 0.1,
        dynamic_chunk: bool = True,
        max_chunk: int = 16,
    ) -> None:
        super().__init__()
        if not isinstance(num_blocks, int) or num_blocks < 1:
            raise ValueError(f"num_blocks must be a positive integer, got {num_blocks!r}")
        self.embed = Conv2dSubsampling4(in_dim, dim, conv_channels)
        self.scale = math.sqrt(dim)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.LayerList(
            [ConformerBlock(dim, heads, ffn_dim, kernel_size, dropout) for _ in range(num_blocks)]
        )
        self.dynamic_chunk, self.max_chunk = bool(dynamic_chunk), int(max_chunk)
        self.out_channels = dim

    def _embed(self, features, offset: int = 0):
        x = self.embed(features)
        return self.dropout(x * self.scale + sinusoidal_positions(x, offset))

    def forward(self, features, chunk_size: int = 0, left_chunks: int = -1):
        x = self._embed(features)
        if self.training and self.dynamic_chunk and chunk_size == 0 and random.random() < 0.5:
            chunk_size = random.randint(1, self.max_chunk)
        mask = paddle.to_tensor(chunk_mask(x.shape[1], chunk_size, left_chunks)) if chunk_size > 0 else None
        for block in self.blocks:
            x = block(x, mask)[0]
        return x

    def forward_chunk(self, features, offset: int, caches: list, keep: int):
        """One chunk's encodings from its feature window, and the caches for the next chunk: each
        block's keys/values of the last ``keep`` frames (-1 = all) and its convolution state."""
        x = self._embed(features, offset)
        updated = []
        for block, (att_cache, conv_cache) in zip(self.blocks, caches, strict=True):
            if conv_cache is None:  # the first chunk: the zeros a whole-utterance pass pads with
                conv_cache = paddle.zeros([x.shape[0], x.shape[2], block.conv.context], dtype=x.dtype)
            x, (k, v), state = block(x, None, att_cache, conv_cache)
            if keep >= 0:
                start = max(0, k.shape[2] - keep)
                k, v = (k[:, :, start:], v[:, :, start:]) if keep else (None, None)
            updated.append(((k, v) if k is not None else None, state))
        return x, updated
