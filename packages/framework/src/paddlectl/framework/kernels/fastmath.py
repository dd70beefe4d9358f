"""Scalar float32 math for kernels that LLVM can vectorise: ``exp``, ``sigmoid``, ``tanh`` and ``erf``.

Numba has no vectorised libm without Intel SVML, and a scalar ``expf``/``tanhf`` call (~5-15 ns)
makes a loop of them cost many times the arithmetic around it (a softmax row, an LSTM step's
gates). For float32 these are plain arithmetic instead (Cody-Waite range reduction and a
polynomial, within 2 ulp of libm), which inlines and vectorises; float64 keeps libm. ``REASSOC``
is the fastmath flag set for kernels whose reductions may be summed in any order (vectorised
partial sums, not one serial chain), which also keeps NaN and infinity semantics.
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import overload

from . import njit

_F = np.float32
_LOG2E = _F(1.4426950408889634)
_LN2_HI = _F(0.693359375)  # ln 2 split so that n * _LN2_HI is exact (Cody-Waite)
_LN2_LO = _F(-2.12194440e-4)
_EXP_LO, _EXP_HI = _F(-87.0), _F(88.72283)  # exp stays a normal float32 in between (HI: ln FLT_MAX)
_ZERO, _INF = _F(0.0), _F(np.inf)
_EXP_POLY = tuple(_F(1.0 / math.factorial(k)) for k in range(8))  # degree 7: error < 1e-8 on |r| < ln2/2
_TANH_SMALL = _F(0.625)  # below, 1 - 2 / (1 + e^2x) cancels: an odd polynomial instead
_TANH_POLY = tuple(_F(c) for c in (1.0, -0.3333326280117035, 0.13331149518489838, -0.05372267961502075,
                                   0.020595679059624672, -0.005664775148034096))  # fmt: skip
"""tanh(x) / x as a polynomial in x^2, least-squares fit on [0, 0.625] (error < 4e-9)."""
_ERF_CLAMP = _F(4.0)  # erf(4) rounds to 1 in float32
_ERF_NUM = tuple(_F(c) for c in (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                                 -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                                 -2.72614225801306e-10))  # fmt: skip
_ERF_DEN = tuple(_F(c) for c in (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                                 -2.13374055278905e-04, -1.45660718464996e-05))  # fmt: skip
"""erf(x) = x P(x^2) / Q(x^2) on [-4, 4], the rational form Eigen and XLA evaluate for float32: within
4.5e-7 of the true value (largest near |x| = 3.2, 7 ulp of a value just below 1; GELU's output off by
at most ~2e-7 relative), against ~15 ns an element for a libm call."""
_ONE, _TWO, _HALF = _F(1.0), _F(2.0), _F(0.5)
_BIAS, _MANTISSA = np.int32(127), np.int32(23)


@njit(cache=True, inline="always")
def _exp32(x):
    """exp(x) = 2^n * e^r with |r| <= ln2 / 2; 2^n is built from its exponent bits, as 2 * 2^(n-1)
    since n reaches 128 just below ln FLT_MAX."""
    v = min(max(x, _EXP_LO), _EXP_HI)
    n = np.floor(v * _LOG2E + _HALF)
    r = v - n * _LN2_HI - n * _LN2_LO
    c0, c1, c2, c3, c4, c5, c6, c7 = _EXP_POLY
    p = c0 + r * (c1 + r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * c7))))))
    scale = np.int32((np.int32(n) - 1 + _BIAS) << _MANTISSA).view(np.float32)
    if x > _EXP_HI:
        return _INF
    if x < _EXP_LO:
        return _ZERO  # true value below 1.7e-38
    return (p * _TWO) * scale if x == x else x


def sigmoid(x):
    """Logistic function of a scalar inside kernels (float32 vectorisable, float64 libm)."""


def tanh(x):
    """tanh of a scalar inside kernels (float32 vectorisable, float64 libm)."""


@overload(sigmoid)
def _sigmoid_impl(x):
    if x == types.float32:
        return lambda x: _ONE / (_ONE + _exp32(-x))
    return lambda x: 1.0 / (1.0 + math.exp(-x))


@overload(tanh)
def _tanh_impl(x):
    if x == types.float32:

        def tanh32(x):
            s = x * x
            t1, t3, t5, t7, t9, t11 = _TANH_POLY
            p = t1 + s * (t3 + s * (t5 + s * (t7 + s * (t9 + s * t11))))
            big = _ONE - _TWO / (_ONE + _exp32(_TWO * abs(x)))
            if abs(x) < _TANH_SMALL:
                return x * p
            return big if x >= 0 else -big

        return tanh32
    return lambda x: math.tanh(x)


def exp(x):
    """exp of a scalar inside kernels (float32 vectorisable, float64 libm)."""


@overload(exp)
def _exp_impl(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: math.exp(x)


def erf(x):
    """erf of a scalar inside kernels (float32 vectorisable, float64 libm)."""


@overload(erf)
def _erf_impl(x):
    if x == types.float32:

        def erf32(x):
            v = min(max(x, -_ERF_CLAMP), _ERF_CLAMP)
            s = v * v
            a1, a3, a5, a7, a9, a11, a13 = _ERF_NUM
            b0, b2, b4, b6, b8 = _ERF_DEN
            p = a1 + s * (a3 + s * (a5 + s * (a7 + s * (a9 + s * (a11 + s * a13)))))
            q = b0 + s * (b2 + s * (b4 + s * (b6 + s * b8)))
            return v * p / q if x == x else x

        return erf32
    return lambda x: math.erf(x)


REASSOC = frozenset({"reassoc", "nsz", "contract"})


def erf_array(x: np.ndarray) -> np.ndarray:
    """``erf32`` on a float32 array with NumPy (the same rational form and constants): the fused
    kernels' NumPy reference (``kernels.numpy_body``)."""
    v = np.clip(x, -_ERF_CLAMP, _ERF_CLAMP)
    s = v * v
    a1, a3, a5, a7, a9, a11, a13 = _ERF_NUM
    b0, b2, b4, b6, b8 = _ERF_DEN
    p = a1 + s * (a3 + s * (a5 + s * (a7 + s * (a9 + s * (a11 + s * a13)))))
    q = b0 + s * (b2 + s * (b4 + s * (b6 + s * b8)))
    return np.where(np.isnan(x), x, v * p / q)
