"""The kernels' float32 exp, sigmoid and tanh: within 2 ulp of float64 references, special values kept."""

from __future__ import annotations

import numpy as np
from numba import njit

from paddlectl.framework.kernels.fastmath import exp, sigmoid, tanh


@njit
def _all_three(x, e, s, t):
    for i in range(x.size):
        e[i] = exp(x[i])
        s[i] = sigmoid(x[i])
        t[i] = tanh(x[i])


def _run(x):
    e, s, t = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    _all_three(x, e, s, t)
    return e, s, t


def _within_ulps(got, ref, ulps=2):
    """Relative error in float32 ulps; results below 1.7e-38 (exp of x < -87) may flush to zero."""
    floor = 1.7e-38
    normal = np.abs(ref) > floor
    eps = np.finfo("float32").eps
    assert np.all(np.abs(got - ref)[normal] <= ulps * eps * np.abs(ref[normal]))
    assert np.all(np.abs(got - ref)[~normal] <= floor)


def test_float32_exp_sigmoid_tanh_stay_within_two_ulp():
    x = np.concatenate([np.linspace(-100, 100, 400_001), np.linspace(-1, 1, 20_001)]).astype("float32")
    e, s, t = _run(x)
    x64 = x.astype("float64")
    finite = x64 < np.log(np.finfo("float32").max)
    _within_ulps(e[finite], np.exp(x64[finite]))
    assert np.all(np.isinf(e[~finite]))
    _within_ulps(s, 1 / (1 + np.exp(-x64)))
    _within_ulps(t, np.tanh(x64))


def test_special_values_are_kept():
    e, s, t = _run(np.array([np.inf, -np.inf, np.nan, 0.0], dtype="float32"))
    np.testing.assert_array_equal(e, [np.inf, 0, np.nan, 1])
    np.testing.assert_array_equal(s, [1, 0, np.nan, 0.5])
    np.testing.assert_array_equal(t, [1, -1, np.nan, 0])


def test_float64_uses_libm():
    x = np.linspace(-30, 30, 1001)
    e, s, t = _run(x)
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-15)
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-x)), rtol=1e-15)
    np.testing.assert_allclose(t, np.tanh(x), rtol=1e-15)
