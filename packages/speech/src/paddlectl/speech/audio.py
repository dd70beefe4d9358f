"""Audio as the speech models take it: one 16 kHz mono float32 waveform per file.

``paddle.audio.load`` keeps every channel and the file's rate (Paddle's behaviour); recognisers want
one channel at the rate they were trained on, so channels are averaged and the rate converted
with soxr. Corrupt, empty and over-long files raise the framework's DataError from ``load``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paddlectl.framework import audio

SAMPLE_RATE = 16000


def read_audio(path: str | Path, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """The file's samples as a 1-D float32 array at ``sample_rate`` (channels averaged)."""
    waveform, rate = audio.load(str(path))
    mono = waveform.numpy().mean(axis=0).astype(np.float32)
    return audio.resample(mono, rate, sample_rate)


def write_audio(path: str | Path, samples: np.ndarray, sample_rate: int = SAMPLE_RATE) -> Path:
    """Write a 1-D float waveform as 16-bit PCM (atomically), clipped to [-1, 1]."""
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)[None, :]
    audio.save(str(path), clipped, sample_rate)
    return Path(path)
