"""``paddle.audio.functional.get_window``: SciPy's window definitions, computed once in float64.

A window is a constant of the feature layers (never a function of the input), so it is built in
NumPy and handed over as a tensor; ``fftbins=True`` gives the periodic form an STFT wants.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError
from ..ops._util import constant

_NEEDS_ARGS = ("gaussian", "general_gaussian", "exponential", "kaiser")


def _general_cosine(m: int, coeffs) -> np.ndarray:
    fac = np.linspace(-math.pi, math.pi, m)
    return sum(a * np.cos(k * fac) for k, a in enumerate(coeffs))


def _bartlett(m: int) -> np.ndarray:
    n = np.arange(m)
    return np.where(n <= (m - 1) / 2.0, 2.0 * n / (m - 1), 2.0 - 2.0 * n / (m - 1))


def _triang(m: int) -> np.ndarray:
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bohman(m: int) -> np.ndarray:
    fac = np.abs(np.linspace(-1, 1, m)[1:-1])
    inner = (1 - fac) * np.cos(math.pi * fac) + np.sin(math.pi * fac) / math.pi
    return np.concatenate([[0.0], inner, [0.0]])


def _cosine(m: int) -> np.ndarray:
    return np.sin(math.pi / m * (np.arange(m) + 0.5))


def _tukey(m: int, alpha: float = 0.5) -> np.ndarray:
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _general_cosine(m, (0.5, 0.5))
    n = np.arange(m)
    width = int(math.floor(alpha * (m - 1) / 2.0))
    w = np.ones(m)
    left, right = n[: width + 1], n[m - width - 1 :]
    w[: width + 1] = 0.5 * (1 + np.cos(math.pi * (-1 + 2.0 * left / alpha / (m - 1))))
    w[m - width - 1 :] = 0.5 * (1 + np.cos(math.pi * (-2.0 / alpha + 1 + 2.0 * right / alpha / (m - 1))))
    return w


def _gaussian(m: int, std: float) -> np.ndarray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-(n**2) / (2 * std * std))


def _general_gaussian(m: int, p: float, sig: float) -> np.ndarray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-0.5 * np.abs(n / sig) ** (2 * p))


def _exponential(m: int, center: float | None = None, tau: float = 1.0) -> np.ndarray:
    center = (m - 1) / 2.0 if center is None else center
    return np.exp(-np.abs(np.arange(m) - center) / tau)


def _kaiser(m: int, beta: float) -> np.ndarray:
    return np.kaiser(m, beta)


def _taylor(m: int, nbar: int = 4, sll: float = 30, norm: bool = True) -> np.ndarray:
    b = 10 ** (sll / 20)
    a = math.acosh(b) / math.pi
    s2 = nbar**2 / (a**2 + (nbar - 0.5) ** 2)
    ma = np.arange(1, nbar, dtype=np.float64)
    signs = np.where(np.arange(nbar - 1) % 2 == 0, 1.0, -1.0)
    fm = np.empty(nbar - 1)
    for i, mi2 in enumerate(ma * ma):
        numer = signs[i] * np.prod(1 - mi2 / s2 / (a**2 + (ma - 0.5) ** 2))
        others = np.delete(ma * ma, i)
        fm[i] = numer / (2 * np.prod(1 - mi2 / others))

    def shape(n):
        return 1 + 2 * fm @ np.cos(2 * math.pi * ma[:, None] * (np.asarray(n, float) - m / 2.0 + 0.5) / m)

    w = shape(np.arange(m))
    return w / shape((m - 1) / 2.0) if norm else w


_WINDOWS = {
    "hann": lambda m: _general_cosine(m, (0.5, 0.5)),
    "hamming": lambda m: _general_cosine(m, (0.54, 0.46)),
    "blackman": lambda m: _general_cosine(m, (0.42, 0.50, 0.08)),
    "nuttall": lambda m: _general_cosine(m, (0.3635819, 0.4891775, 0.1365995, 0.0106411)),
    "bartlett": _bartlett,
    "triang": _triang,
    "bohman": _bohman,
    "cosine": _cosine,
    "tukey": _tukey,
    "gaussian": _gaussian,
    "general_gaussian": _general_gaussian,
    "exponential": _exponential,
    "kaiser": _kaiser,
    "taylor": _taylor,
}


def window_array(window, win_length: int, fftbins: bool = True) -> np.ndarray:
    """The window as a float64 array: ``window`` is a name or ``(name, *params)``, as in Paddle and SciPy."""
    name, params = (window[0], tuple(window[1:])) if isinstance(window, tuple) else (window, ())
    if not isinstance(name, str) or name not in _WINDOWS:
        raise ConfigError(f"unknown window {window!r}; use one of {', '.join(sorted(_WINDOWS))}")
    if name in _NEEDS_ARGS and not params:
        raise ConfigError(f"the {name!r} window needs parameters: pass a tuple such as ({name!r}, 1.0)")
    if isinstance(win_length, bool) or not isinstance(win_length, int | np.integer) or win_length < 0:
        raise ConfigError(f"win_length must be a non-negative int, got {win_length!r}")
    if win_length <= 1:
        return np.ones(int(win_length))
    if name == "exponential" and not fftbins and len(params) > 0 and params[0] is not None:
        raise ConfigError('a symmetric exponential window cannot take a center: pass ("exponential", None, tau)')
    m = int(win_length) + 1 if fftbins else int(win_length)
    w = np.asarray(_WINDOWS[name](m, *params), dtype=np.float64)
    return w[:-1] if fftbins else w


def get_window(window, win_length: int, fftbins: bool = True, dtype: str = "float64"):
    """Paddle's ``get_window``: a 1-D tensor of ``win_length`` samples of the named window."""
    return constant(window_array(window, win_length, fftbins).astype(np.dtype(dtype)))
