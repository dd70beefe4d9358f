"""Chunked (streaming) encoding with the Conformer: feature windows in, encoder frames out, the
attention and convolution caches carried between chunks.

Each chunk of ``chunk_size`` encoder frames needs ``(chunk_size - 1) * 4 + 7`` feature frames (the
subsampling's receptive field), and windows advance by ``chunk_size * 4``, so the windows overlap
by 3 frames and their encoder frames are exactly the full pass's (wenet's
``forward_chunk_by_chunk``).
"""

from __future__ import annotations

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError

from .layers import RECEPTIVE_FIELD, SUBSAMPLING


def stream_encode(encoder, features, chunk_size: int, left_chunks: int = -1):
    """[1, T, F] features -> [1, T', D] encodings computed chunk by chunk (the generator
    ``iter_chunks`` gives them as they are ready)."""
    return paddle.concat(list(iter_chunks(encoder, features, chunk_size, left_chunks)), axis=1)


def iter_chunks(encoder, features, chunk_size: int, left_chunks: int = -1):
    """Yield [1, <= chunk_size, D] encodings per chunk of ``features`` [1, T, F]."""
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise ConfigError(f"chunk_size must be a positive number of encoder frames, got {chunk_size!r}")
    if not isinstance(left_chunks, int) or left_chunks < -1:
        raise ConfigError(f"left_chunks must be -1 (all) or a count of chunks, got {left_chunks!r}")
    if not hasattr(encoder, "forward_chunk"):
        raise ConfigError(f"{type(encoder).__name__} does not stream; use the Conformer encoder")
    window = (chunk_size - 1) * SUBSAMPLING + RECEPTIVE_FIELD
    stride = chunk_size * SUBSAMPLING
    keep = left_chunks * chunk_size if left_chunks >= 0 else -1
    caches = [(None, None)] * len(encoder.blocks)
    offset, frames = 0, features.shape[1]
    with paddle.no_grad():
        for start in range(0, frames - RECEPTIVE_FIELD + 1, stride):
            out, caches = encoder.forward_chunk(features[:, start : start + window], offset, caches, keep)
            offset += out.shape[1]
            yield out
