"""``paddle.signal``: the short-time Fourier transform and its inverse (ops/signal.py)."""

from .ops.signal import istft, stft

__all__ = ["stft", "istft"]
