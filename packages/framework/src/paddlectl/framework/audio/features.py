"""``paddle.audio.features``: Spectrogram, MelSpectrogram, LogMelSpectrogram and MFCC as layers.

The STFT is one strided ``conv1d`` whose kernels are the window times the DFT's cosines and sines
(a real DFT as matrix products, no complex dtype), so the layers differentiate, trace and export
with the framework's ordinary ops and an exported model carries its own front-end. Defaults are
Paddle's, which differ from librosa's in places (``f_min=50``, ``hop_length=512`` here, ``n_mels=64``).
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from .. import nn
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..nn import functional as F
from ..ops._util import constant
from .functional import compute_fbank_matrix, create_dct, power_to_db
from .window import get_window, window_array

__all__ = ["LogMelSpectrogram", "MFCC", "MelSpectrogram", "Spectrogram"]

_PAD_MODES = ("reflect", "constant")

# Paddle's parameters of each layer, in its order, with its defaults: one table, read by the binder
# and shown by ``inspect.signature`` / ``help``.
_STFT = {
    "n_fft": 512,
    "hop_length": 512,
    "win_length": None,
    "window": "hann",
    "power": 1.0,
    "center": True,
    "pad_mode": "reflect",
}
_MEL = {"n_mels": 64, "f_min": 50.0, "f_max": None, "htk": False, "norm": "slaney"}
_DB = {"ref_value": 1.0, "amin": 1e-10, "top_db": None}
_LOG_MEL = {**_STFT, "hop_length": None, "power": 2.0, **_MEL, **_DB, "dtype": "float32"}


def _paddle_parameters(defaults: dict):
    """Give the layer ``defaults`` as its signature: ``Layer(*args, **kwargs)`` binds like Paddle's."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature([inspect.Parameter(k, kind, default=v) for k, v in defaults.items()])

    def decorate(cls):
        cls.__signature__ = signature
        return cls

    return decorate


def _bind(layer_cls, args: tuple, kwargs: dict) -> dict:
    """The layer's settings: its positional and keyword arguments over its defaults (TypeError for
    an unknown name or one too many, as Python says it)."""
    bound = layer_cls.__signature__.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def _pick(settings: dict, layer_cls) -> dict:
    return {k: settings[k] for k in layer_cls.__signature__.parameters}


def _dft_kernel(window: np.ndarray, n_fft: int, trim: bool) -> np.ndarray:
    """``(2 * (n_fft // 2 + 1), 1, taps)``: windowed cosines then negated sines, one kernel per bin.
    The window sits centred in the ``n_fft`` frame; ``trim`` keeps only its ``len(window)`` taps (the
    rest are zeros), which the caller makes up for by padding less."""
    left = (n_fft - len(window)) // 2
    taps = np.arange(left, left + len(window)) if trim else np.arange(n_fft)
    padded = np.zeros(n_fft)
    padded[left : left + len(window)] = window
    angles = 2 * math.pi * np.outer(np.arange(n_fft // 2 + 1), taps) / n_fft
    return np.concatenate([np.cos(angles), -np.sin(angles)])[:, None, :] * padded[taps]


@_paddle_parameters({**_STFT, "dtype": "float32"})
class Spectrogram(nn.Layer):
    """``|STFT(x)| ** power`` of waveforms ``(N, T)`` (or ``(T,)``) as ``(N, n_fft // 2 + 1, frames)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        s = _bind(Spectrogram, args, kwargs)
        n_fft, window, power, dtype = s["n_fft"], s["window"], s["power"], s["dtype"]
        _positive("n_fft", n_fft)
        win_length = n_fft if s["win_length"] is None else s["win_length"]
        hop_length = n_fft // 4 if s["hop_length"] is None else s["hop_length"]
        _positive("hop_length", hop_length)
        _positive("win_length", win_length)
        if win_length > n_fft:
            raise ConfigError(
                f"win_length ({win_length}) must be <= n_fft ({n_fft}); raise n_fft or shorten the window"
            )
        if not power > 0:
            raise ConfigError(f"power must be > 0, got {power}")
        if s["pad_mode"] not in _PAD_MODES:
            raise ConfigError(f"pad_mode must be one of {_PAD_MODES}, got {s['pad_mode']!r}")
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.power, self.center, self.pad_mode, self.dtype = float(power), bool(s["center"]), s["pad_mode"], str(dtype)
        self.register_buffer("fft_window", get_window(window, win_length, fftbins=True, dtype=dtype))
        # centred frames: a window shorter than n_fft only needs its own taps, with less padding
        kernel = _dft_kernel(window_array(window, win_length, fftbins=True), n_fft, trim=self.center)
        self.register_buffer("dft_kernel", constant(kernel.astype(np.dtype(dtype))), persistable=False)

    def forward(self, x: Tensor) -> Tensor:
        frames = self._stft(x)
        bins = self.n_fft // 2 + 1
        power = frames[:, :bins] * frames[:, :bins] + frames[:, bins:] * frames[:, bins:]
        if self.power != 2.0:
            power = power.sqrt() if self.power == 1.0 else power.pow(self.power / 2.0)
        return power if x.ndim == 2 else power.squeeze(0)

    def _stft(self, x: Tensor) -> Tensor:
        """Real and imaginary parts stacked on the bin axis: ``(N, 2 * bins, frames)``."""
        if not isinstance(x, Tensor):
            raise DTypeError(f"{type(self).__name__} takes a Tensor of waveforms, got {type(x).__name__}")
        if x.ndim not in (1, 2):
            raise ShapeError(f"{type(self).__name__} takes waveforms (N, T) or (T,), got shape {list(x.shape)}")
        if str(x.dtype) != self.dtype:
            raise DTypeError(
                f"{type(self).__name__} was built for {self.dtype} waveforms, got {x.dtype}: "
                f"cast with x.astype('{self.dtype}') or build the layer with dtype='{x.dtype}'"
            )
        x = x.unsqueeze(1) if x.ndim == 2 else x.reshape([1, 1, -1])
        length = x.shape[-1]
        pad = self.n_fft // 2
        need = pad + 1 if self.center and self.pad_mode == "reflect" else (1 if self.center else self.n_fft)
        if STATE.tracer is None and length < need:  # a traced length is only an example size
            raise ShapeError(
                f"{type(self).__name__}: a waveform of {length} samples is too short for n_fft={self.n_fft} "
                f"(center={self.center}, pad_mode={self.pad_mode!r}); give at least {need} samples or lower n_fft"
            )
        if self.center:
            left = (self.n_fft - self.win_length) // 2
            right = self.n_fft - self.win_length - left
            x = F.pad(x, [pad - left, pad - right], mode=self.pad_mode, data_format="NCL")
        return F.conv1d(x, self.dft_kernel, stride=self.hop_length)


@_paddle_parameters({"sr": 22050, **_STFT, "n_fft": 2048, "power": 2.0, **_MEL, "dtype": "float32"})
class MelSpectrogram(nn.Layer):
    """A power spectrogram mapped onto ``n_mels`` mel bands: ``(N, n_mels, frames)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        s = _bind(MelSpectrogram, args, kwargs)
        self._spectrogram = Spectrogram(**_pick(s, Spectrogram))
        self.n_mels, self.f_min, self.f_max, self.htk, self.norm = (
            s[k] for k in ("n_mels", "f_min", "f_max", "htk", "norm")
        )
        f_max = s["sr"] // 2 if s["f_max"] is None else s["f_max"]
        fbank = compute_fbank_matrix(
            s["sr"], s["n_fft"], s["n_mels"], s["f_min"], f_max, s["htk"], s["norm"], s["dtype"]
        )
        self.register_buffer("fbank_matrix", fbank)

    def forward(self, x: Tensor) -> Tensor:
        return self.fbank_matrix.matmul(self._spectrogram(x))


@_paddle_parameters({"sr": 22050, **_LOG_MEL})
class LogMelSpectrogram(nn.Layer):
    """A mel spectrogram in decibels (``power_to_db``): ``(N, n_mels, frames)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        s = _bind(LogMelSpectrogram, args, kwargs)
        self._melspectrogram = MelSpectrogram(**_pick(s, MelSpectrogram))
        self.ref_value, self.amin, self.top_db = s["ref_value"], s["amin"], s["top_db"]
        power_to_db(constant(np.ones(1, np.float32)), self.ref_value, self.amin, self.top_db)  # checked now

    def forward(self, x: Tensor) -> Tensor:
        return power_to_db(self._melspectrogram(x), self.ref_value, self.amin, self.top_db)


@_paddle_parameters({"sr": 22050, "n_mfcc": 40, **_LOG_MEL})
class MFCC(nn.Layer):
    """Mel-frequency cepstral coefficients: the DCT of the log-mel spectrogram, ``(N, n_mfcc, frames)``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        s = _bind(MFCC, args, kwargs)
        n_mfcc, n_mels = s["n_mfcc"], s["n_mels"]
        if isinstance(n_mfcc, int) and isinstance(n_mels, int) and n_mfcc > n_mels:
            raise ConfigError(f"n_mfcc ({n_mfcc}) cannot exceed n_mels ({n_mels}): lower n_mfcc or raise n_mels")
        self._log_melspectrogram = LogMelSpectrogram(**_pick(s, LogMelSpectrogram))
        self.register_buffer("dct_matrix", create_dct(n_mfcc=n_mfcc, n_mels=n_mels, dtype=s["dtype"]))

    def forward(self, x: Tensor) -> Tensor:
        log_mel = self._log_melspectrogram(x)
        if log_mel.ndim == 2:
            return self.dct_matrix.t().matmul(log_mel)
        return log_mel.transpose([0, 2, 1]).matmul(self.dct_matrix).transpose([0, 2, 1])


def _positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
