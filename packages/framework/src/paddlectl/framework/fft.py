"""``paddle.fft``: discrete Fourier transforms and their helpers (ops/fft.py)."""

from .ops import fft as _fft

globals().update({_n: getattr(_fft, _n) for _n in _fft.FFT})

__all__ = list(_fft.FFT)
