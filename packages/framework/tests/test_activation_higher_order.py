"""Second and third derivatives of the activations and softmax against central finite differences
(float64): each order's gradient, from ``paddle.grad(create_graph=True)``, is checked against the
numerical derivative of the order before it, so every backward op's own vjp is covered."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle

F = paddle.nn.functional
STEP = 1e-5


def _chain(fn, x: np.ndarray, weights: list[np.ndarray], order: int) -> np.ndarray:
    """``fn(x)``, then ``order`` times the gradient of its weighted sum, each differentiable again
    (a gradient that no longer depends on ``x``, piecewise linear functions' second, is zeros)."""
    t = paddle.to_tensor(x, stop_gradient=False)
    y = fn(t)
    for k in range(order):
        if y.stop_gradient:
            return np.zeros_like(x)
        (y,) = paddle.grad((y * paddle.to_tensor(weights[k])).sum(), t, create_graph=True, allow_unused=True)
        if y is None:
            return np.zeros_like(x)
    return y.numpy()


def _numeric(fn, x: np.ndarray, weights: list[np.ndarray], order: int) -> np.ndarray:
    """Central differences of ``sum(chain(order - 1) * weights[order - 1])``, element by element."""
    out = np.empty_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += STEP
        down[i] -= STEP
        w = weights[order - 1]
        f_up = (_chain(fn, up, weights, order - 1) * w).sum()
        f_down = (_chain(fn, down, weights, order - 1) * w).sum()
        out[i] = (f_up - f_down) / (2 * STEP)
    return out


def _away_from(kinks, x):
    for k in kinks:
        near = np.abs(x - k) < 0.1
        x[near] = k + np.where(x[near] >= k, 0.2, -0.2)
    return x


CASES = [
    ("tanh", paddle.tanh, []),
    ("sigmoid", F.sigmoid, []),
    ("softmax", lambda x: F.softmax(x, axis=-1), []),
    ("softmax-axis0", lambda x: F.softmax(x, axis=0), []),
    ("log_softmax", lambda x: F.log_softmax(x, axis=-1), []),
    ("log_softmax-axis0", lambda x: F.log_softmax(x, axis=0), []),
    ("gelu", F.gelu, []),
    ("gelu-tanh", lambda x: F.gelu(x, approximate=True), []),
    ("silu", F.silu, []),
    ("mish", F.mish, []),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0), [2.5]),
    ("elu", lambda x: F.elu(x, alpha=0.7), [0]),
    ("selu", F.selu, [0]),
    ("celu", lambda x: F.celu(x, alpha=1.3), [0]),
    ("hardswish", F.hardswish, [-3, 3]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), [0]),
    ("relu", F.relu, [0]),
    ("prelu", lambda x: F.prelu(x, paddle.to_tensor(np.array([0.25]))), [0]),
    ("clip", lambda x: paddle.clip(x, -1.0, 1.5), [-1, 1.5]),
    ("scale", lambda x: paddle.scale(x * x, 1.5, bias=0.5), []),
]


@pytest.mark.parametrize(("name", "fn", "kinks"), CASES, ids=[c[0] for c in CASES])
def test_third_derivatives_match_finite_differences(name, fn, kinks):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    x = _away_from(kinks, rng.uniform(-3.5, 3.5, (3, 4)))
    weights = [rng.standard_normal((3, 4)) for _ in range(3)]
    for order in (1, 2, 3):
        got = _chain(fn, x, weights, order)
        expected = _numeric(fn, x, weights, order)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, err_msg=f"{name}: derivative {order}")


def test_piecewise_linear_activations_have_zero_second_derivative():
    """relu's gradient op is linear in its input gradient: the second derivative is zeros (as in
    PyTorch), not an error saying the input is unused."""
    x = paddle.to_tensor(np.array([-1.0, 2.0, 3.0]), stop_gradient=False)
    (g,) = paddle.grad((F.relu(x) ** 2).sum(), x, create_graph=True)
    (h,) = paddle.grad(F.relu(x).sum(), x, create_graph=True)
    (hh,) = paddle.grad(h.sum(), x, allow_unused=True)
    np.testing.assert_allclose(g.numpy(), [0.0, 4.0, 6.0])
    np.testing.assert_array_equal(hh.numpy(), np.zeros(3))
