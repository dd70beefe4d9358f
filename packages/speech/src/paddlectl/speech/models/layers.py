"""Parts both recognisers share: the convolutional front that subsamples time by 4, and sinusoidal
positions computed from the input itself (a cumulative sum), so traced programs serve any length."""

from __future__ import annotations

import math

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.nn import functional as F

SUBSAMPLING = 4
"""Feature frames per encoder frame."""
RECEPTIVE_FIELD = 7
"""Feature frames one encoder frame sees (two 3x3 convolutions, stride 2, no time padding)."""


def subsampled_length(frames: int) -> int:
    """Encoder frames made from ``frames`` feature frames (0 when fewer than the receptive field)."""
    return 0 if frames < RECEPTIVE_FIELD else (frames - RECEPTIVE_FIELD) // SUBSAMPLING + 1


class Conv2dSubsampling4(nn.Layer):
    """[B, T, F] features -> [B, (T-7)//4+1, out_dim]: two 3x3 stride-2 convolutions with ReLU, the
    channels and remaining frequencies flattened and projected (wenet's ``Conv2dSubsampling4``).
    Without time padding each output frame depends on 7 input frames only, which is what lets the
    streaming encoder feed overlapping windows and get the full-utterance frames exactly."""

    def __init__(self, in_dim: int, out_dim: int, channels: int = 32) -> None:
        super().__init__()
        self.conv1 = nn.Conv2D(1, channels, 3, stride=2)
        self.conv2 = nn.Conv2D(channels, channels, 3, stride=2)
        freq = ((in_dim - 1) // 2 - 1) // 2
        if freq < 1:
            raise ValueError(f"feature dimension {in_dim} is too small for two stride-2 convolutions; use at least 7")
        self.flat = channels * freq
        self.out = nn.Linear(self.flat, out_dim)

    def forward(self, x):
        x = F.relu(self.conv1(paddle.unsqueeze(x, 1)))
        x = F.relu(self.conv2(x))  # [B, C, T', F']
        x = paddle.reshape(paddle.transpose(x, [0, 2, 1, 3]), [0, 0, self.flat])
        return self.out(x)


def sinusoidal_positions(x, offset: int = 0):
    """Absolute sinusoidal encodings [B, T, D] for the frames of ``x`` [B, T, D], numbered from
    ``offset`` (a streaming chunk's first frame); sines in the first half, cosines in the second."""
    dim = x.shape[-1]
    position = paddle.cumsum(paddle.ones_like(x[:, :, :1]), axis=1) + (offset - 1.0)
    inv_freq = paddle.to_tensor([math.exp(-math.log(10000.0) * 2 * i / dim) for i in range(dim // 2)], dtype=x.dtype)
    angle = position * inv_freq
    return paddle.concat([paddle.sin(angle), paddle.cos(angle)], axis=-1)
