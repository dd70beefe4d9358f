"""The recognisers' front-end, inside the model so training and serving compute the same features
and an exported model takes raw 16 kHz audio: log-mel filter banks (``paddle.audio``'s
``LogMelSpectrogram``, 25 ms windows every 10 ms) and a per-band normalisation whose statistics
are learnt over the training set (BatchNorm running means and variances, i.e. global CMVN),
optionally after a per-utterance CMVN (``utterance_cmvn``; ``utterance_variance: false`` removes
the mean alone) that takes out each recording's own channel: a microphone's or room's frequency response is a constant per-band offset in log-mel. In
training, ``spec_augment`` settings apply SpecAugment to the normalised features (nothing before it
is trained, so the augmented features enter the graph as data).

Every clip gets ``RECEPTIVE_FIELD - 1`` hops of silence appended, so even the shortest clip fills
the encoder's subsampling window (one encoder frame, not an error) and a program traced at any
length is valid."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework import nn
from paddlectl.framework.audio.features import LogMelSpectrogram
from paddlectl.framework.nn import functional as F

from ..augment import SpecAugment
from .layers import RECEPTIVE_FIELD

SAMPLE_RATE = 16000
SPEECH_RANGE_DB = 40.0
"""Frames whose mean log-mel level is within this many dB of the utterance's loudest frame (and
above the amin floor) give the per-utterance statistics: the silence that pads a training window or
a served clip would otherwise set the mean by its length."""


def utterance_cmvn(log_mel, floor_db: float, variance: bool = True, eps: float = 1e-3):
    """[B, n_mels, frames] log-mel (dB) -> each band shifted to mean 0 (and, with ``variance``, scaled to
    variance 1) over the utterance's own loud frames (``SPEECH_RANGE_DB``), as Kaldi's per-utterance
    CMVN (``norm_vars``) but blind to padding."""
    level = paddle.mean(log_mel, axis=1, keepdim=True)
    loudest = paddle.max(level, axis=2, keepdim=True)
    floor = paddle.full_like(loudest, floor_db + 1.0)
    weight = paddle.cast(level > paddle.maximum(loudest - SPEECH_RANGE_DB, floor), "float32")
    count = paddle.maximum(paddle.sum(weight, axis=2, keepdim=True), paddle.full_like(loudest, 1.0))
    mean = paddle.sum(log_mel * weight, axis=2, keepdim=True) / count
    centred = log_mel - mean
    if not variance:
        return centred
    spread = paddle.sum(centred * centred * weight, axis=2, keepdim=True) / count
    return centred / paddle.sqrt(spread + eps)


class Frontend(nn.Layer):
    """[B, S] waveforms in [-1, 1] -> [B, S // hop_length + 7, n_mels] normalised log-mel features."""

    def __init__(
        self,
        n_mels: int = 80,
        n_fft: int = 512,
        win_length: int = 400,
        hop_length: int = 160,
        f_min: float = 20.0,
        f_max: float = 7600.0,
        amin: float = 1e-5,
        spec_augment: dict | None = None,
        utterance_cmvn: bool = False,
        utterance_variance: bool = True,
    ) -> None:
        super().__init__()
        self.logmel = LogMelSpectrogram(
            sr=SAMPLE_RATE,
            n_fft=n_fft,
            hop_length=hop_length,
            win_length=win_length,
            n_mels=n_mels,
            f_min=f_min,
            f_max=f_max,
            amin=amin,  # a floor at -50 dB: digital silence stays near quiet speech, not at -100 dB
        )
        self.cmvn = nn.BatchNorm1D(n_mels, weight_attr=False, bias_attr=False)
        self.spec_augment = SpecAugment(**spec_augment) if spec_augment else None
        self.n_mels, self.hop_length = n_mels, hop_length
        self.floor_db = 10.0 * float(np.log10(amin)) if utterance_cmvn else None
        self.utterance_variance = utterance_variance

    def log_mel(self, audio):
        """[B, S] waveforms -> [B, n_mels, frames] log-mel features, before normalisation. Nothing in
        it is trained, so a training set may compute these once (``cache_features``)."""
        return self.logmel(F.pad(audio, [0, (RECEPTIVE_FIELD - 1) * self.hop_length]))

    def normalise(self, log_mel):
        """[B, n_mels, frames] -> [B, frames, n_mels]: per-utterance CMVN if asked, global CMVN, then
        SpecAugment when training."""
        if self.floor_db is not None:
            log_mel = utterance_cmvn(log_mel, self.floor_db, self.utterance_variance)
        features = paddle.transpose(self.cmvn(log_mel), [0, 2, 1])
        if self.training and self.spec_augment is not None:
            # masks (and warps) drawn from NumPy's global stream, which the trainer seeds and checkpoints
            rng = np.random.default_rng(np.random.randint(2**31))
            features = paddle.to_tensor(np.stack([self.spec_augment(f, rng) for f in features.numpy()]))
        return features

    def forward(self, inputs):
        """Waveforms [B, S], or log-mel features [B, n_mels, frames] a dataset computed with ``log_mel``."""
        return self.normalise(inputs if inputs.ndim == 3 else self.log_mel(inputs))
