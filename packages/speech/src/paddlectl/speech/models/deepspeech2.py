"""DeepSpeech2 (PaddleSpeech's ``DeepSpeech2Model`` offline): a convolutional front subsampling time
by 4, bidirectional GRU layers, a projection to the characters for CTC."""

from __future__ import annotations

from paddlectl.framework import nn

from .layers import Conv2dSubsampling4


class DeepSpeech2(nn.Layer):
    """[B, T, F] features -> [B, T', hidden * 2] encodings (``out_channels`` wide)."""

    def __init__(self, in_dim: int, conv_channels: int = 32, hidden: int = 256, num_layers: int = 3, dropout=0.1):
        super().__init__()
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"num_layers must be a positive integer, got {num_layers!r}")
        self.front = Conv2dSubsampling4(in_dim, hidden, conv_channels)
        self.rnn = nn.GRU(hidden, hidden, num_layers=num_layers, direction="bidirect", dropout=float(dropout))
        self.out_channels = 2 * hidden

    def forward(self, x):
        output, _ = self.rnn(self.front(x))
        return output
