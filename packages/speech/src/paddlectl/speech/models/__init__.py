"""The speech recognisers: front-end (raw audio -> features), an encoder, a linear CTC head."""

from __future__ import annotations

from paddlectl.framework import nn

from .conformer import Conformer
from .deepspeech2 import DeepSpeech2
from .frontend import SAMPLE_RATE, Frontend
from .layers import SUBSAMPLING

ENCODERS = {"DeepSpeech2": DeepSpeech2, "Conformer": Conformer}


class AsrModel(nn.Layer):
    """[B, S] 16 kHz audio -> [B, T', classes] CTC logits (T' = encoder frames, 40 ms apart)."""

    def __init__(self, frontend: Frontend, encoder, num_classes: int) -> None:
        super().__init__()
        self.frontend, self.encoder = frontend, encoder
        self.head = nn.Linear(encoder.out_channels, num_classes)

    @property
    def frame_seconds(self) -> float:
        return self.frontend.hop_length * SUBSAMPLING / SAMPLE_RATE

    def forward(self, audio):
        return self.head(self.encoder(self.frontend(audio)))


__all__ = ["ENCODERS", "SAMPLE_RATE", "AsrModel", "Conformer", "DeepSpeech2", "Frontend"]
