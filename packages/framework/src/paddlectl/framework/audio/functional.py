"""``paddle.audio.functional``: the mel scale, filter banks, decibels and the DCT, with Paddle's defaults.

Mel and Hz conversions work on floats and on tensors (as framework ops, so they trace and
differentiate); the matrices (filter bank, DCT) are constants computed in float64 and cast once.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError
from ..ops._util import constant
from ..ops.creation import full_like
from ..ops.index import where
from .window import get_window

__all__ = [
    "compute_fbank_matrix",
    "create_dct",
    "fft_frequencies",
    "get_window",
    "hz_to_mel",
    "mel_frequencies",
    "mel_to_hz",
    "power_to_db",
]

# Slaney's mel scale (librosa's default): linear below 1 kHz, logarithmic above.
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = math.log(6.4) / 27.0


def _np_hz_to_mel(freq, htk: bool):
    freq = np.asarray(freq, dtype=np.float64)
    if htk:
        return 2595.0 * np.log10(1.0 + freq / 700.0)
    log_part = _MIN_LOG_MEL + np.log(np.maximum(freq, 1e-300) / _MIN_LOG_HZ) / _LOGSTEP
    return np.where(freq >= _MIN_LOG_HZ, log_part, freq / _F_SP)


def _np_mel_to_hz(mel, htk: bool):
    mel = np.asarray(mel, dtype=np.float64)
    if htk:
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    return np.where(mel >= _MIN_LOG_MEL, _MIN_LOG_HZ * np.exp(_LOGSTEP * (mel - _MIN_LOG_MEL)), _F_SP * mel)


def hz_to_mel(freq, htk: bool = False):
    """Hz to mels (Slaney's scale, or HTK's with ``htk=True``); a float for a float, a tensor for a tensor."""
    if not isinstance(freq, Tensor):
        return float(_np_hz_to_mel(freq, htk))
    if htk:
        return 2595.0 * (1.0 + freq / 700.0).log10()
    linear = freq / _F_SP
    logarithmic = _MIN_LOG_MEL + (freq.maximum(full_like(freq, 1e-10)) / _MIN_LOG_HZ).log() / _LOGSTEP
    return where(freq >= _MIN_LOG_HZ, logarithmic, linear)


def mel_to_hz(mel, htk: bool = False):
    """Mels back to Hz, the inverse of :func:`hz_to_mel`."""
    if not isinstance(mel, Tensor):
        return float(_np_mel_to_hz(mel, htk))
    if htk:
        return 700.0 * (full_like(mel, 10.0).pow(mel / 2595.0) - 1.0)
    logarithmic = _MIN_LOG_HZ * (_LOGSTEP * (mel - _MIN_LOG_MEL)).exp()
    return where(mel >= _MIN_LOG_MEL, logarithmic, _F_SP * mel)


def _constant(array: np.ndarray, dtype: str) -> Tensor:
    return constant(np.asarray(array).astype(np.dtype(dtype)))


def _mel_points(n_mels: int, f_min: float, f_max: float, htk: bool) -> np.ndarray:
    mels = np.linspace(_np_hz_to_mel(f_min, htk), _np_hz_to_mel(f_max, htk), n_mels)
    return _np_mel_to_hz(mels, htk)


def mel_frequencies(
    n_mels: int = 64, f_min: float = 0.0, f_max: float = 11025.0, htk: bool = False, dtype: str = "float32"
):
    """``n_mels`` frequencies (Hz) evenly spaced on the mel scale from ``f_min`` to ``f_max``."""
    _check_positive_int("n_mels", n_mels)
    return _constant(_mel_points(n_mels, f_min, f_max, htk), dtype)


def fft_frequencies(sr: int, n_fft: int, dtype: str = "float32"):
    """The ``n_fft // 2 + 1`` frequencies (Hz) of a one-sided DFT's bins."""
    _check_positive_int("sr", sr)
    _check_positive_int("n_fft", n_fft)
    return _constant(np.linspace(0, float(sr) / 2, 1 + n_fft // 2), dtype)


def fbank_array(sr, n_fft, n_mels=64, f_min=0.0, f_max=None, htk=False, norm="slaney") -> np.ndarray:
    """The mel filter bank as a float64 ``(n_mels, n_fft // 2 + 1)`` array (triangles on the mel scale)."""
    for name, value in (("sr", sr), ("n_fft", n_fft), ("n_mels", n_mels)):
        _check_positive_int(name, value)
    f_max = float(sr) / 2 if f_max is None else float(f_max)
    if not 0 <= f_min < f_max:
        raise ConfigError(f"mel filter bank: need 0 <= f_min < f_max, got f_min={f_min}, f_max={f_max}")
    fft_freqs = np.linspace(0, float(sr) / 2, 1 + n_fft // 2)
    mel_f = _mel_points(n_mels + 2, f_min, f_max, htk)
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    if norm == "slaney":
        weights *= (2.0 / (mel_f[2 : n_mels + 2] - mel_f[:n_mels]))[:, None]
    elif isinstance(norm, int | float) and not isinstance(norm, bool):
        scale = np.linalg.norm(weights, ord=norm, axis=-1, keepdims=True)
        weights = weights / np.maximum(scale, 1e-12)
    elif norm is not None:
        raise ConfigError(f"mel filter bank norm must be 'slaney', a p-norm number or None, got {norm!r}")
    return weights


def compute_fbank_matrix(sr, n_fft, n_mels=64, f_min=0.0, f_max=None, htk=False, norm="slaney", dtype="float32"):
    """Paddle's mel filter bank: a ``(n_mels, n_fft // 2 + 1)`` tensor mapping a power spectrum to mel bands."""
    return _constant(fbank_array(sr, n_fft, n_mels, f_min, f_max, htk, norm), dtype)


def power_to_db(spect, ref_value: float = 1.0, amin: float = 1e-10, top_db: float | None = 80.0):
    """``10 * log10(spect / ref_value)``, floored at ``amin`` and, with ``top_db``, at ``top_db`` below the
    largest value of the whole tensor (Paddle's rule; librosa's per signal is the same for one signal)."""
    if amin <= 0:
        raise ConfigError(f"power_to_db: amin must be > 0, got {amin}")
    if ref_value <= 0:
        raise ConfigError(f"power_to_db: ref_value must be > 0, got {ref_value}")
    if top_db is not None and top_db < 0:
        raise ConfigError(f"power_to_db: top_db must be >= 0 or None, got {top_db}")
    log_spec = 10.0 * spect.maximum(full_like(spect, amin)).log10()
    log_spec = log_spec - 10.0 * math.log10(max(ref_value, amin))
    if top_db is not None:
        log_spec = log_spec.maximum(log_spec.max() - top_db)
    return log_spec


def dct_array(n_mfcc: int, n_mels: int, norm: str | None = "ortho") -> np.ndarray:
    """The DCT-II basis as a float64 ``(n_mels, n_mfcc)`` array."""
    _check_positive_int("n_mfcc", n_mfcc)
    _check_positive_int("n_mels", n_mels)
    dct = np.cos(math.pi / n_mels * (np.arange(n_mels) + 0.5)[None, :] * np.arange(n_mfcc)[:, None])
    if norm is None:
        dct *= 2.0
    elif norm == "ortho":
        dct[0] *= 1.0 / math.sqrt(2.0)
        dct *= math.sqrt(2.0 / n_mels)
    else:
        raise ConfigError(f"create_dct norm must be 'ortho' or None, got {norm!r}")
    return dct.T


def create_dct(n_mfcc: int, n_mels: int, norm: str | None = "ortho", dtype: str = "float32"):
    """The DCT matrix ``(n_mels, n_mfcc)`` that turns log-mel bands into cepstral coefficients."""
    return _constant(dct_array(n_mfcc, n_mels, norm), dtype)


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
