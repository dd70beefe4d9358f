"""Higher-order gradients of the reductions and matrix ops (issue 21): ``paddle.grad(...,
create_graph=True)`` differentiated again, against float64 central finite differences of the
first (or second) derivative along a random direction. Before issue 21 every one of these ops
refused ``create_graph``."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle

H = 1e-5


def _tensors(arrays):
    out = []
    for a in arrays:
        t = paddle.to_tensor(a)
        t.stop_gradient = False
        out.append(t)
    return out


def _grads(f, arrays, create_graph=False):
    xs = _tensors(arrays)
    return xs, paddle.grad(f(*xs), xs, create_graph=create_graph)


def _directional(fn, arrays, directions):
    """Central difference of ``fn(arrays)`` (a list of arrays) along ``directions``."""
    plus = fn([a + H * d for a, d in zip(arrays, directions, strict=True)])
    minus = fn([a - H * d for a, d in zip(arrays, directions, strict=True)])
    return [(p - m) / (2 * H) for p, m in zip(plus, minus, strict=True)]


def _hvp(f, arrays, v):
    """The Hessian of ``f`` times ``v``, by differentiating ``<grad f, v>`` again."""
    xs, gs = _grads(f, arrays, create_graph=True)
    inner = sum((g * paddle.to_tensor(d)).sum() for g, d in zip(gs, v, strict=True))
    return xs, [h.numpy() for h in paddle.grad(inner, xs, create_graph=True)]


def check_second_order(f, arrays, rtol=1e-5, atol=1e-6):
    rng = np.random.default_rng(1)
    v = [rng.standard_normal(a.shape) for a in arrays]
    _, hv = _hvp(f, arrays, v)
    expected = _directional(lambda p: [g.numpy() for g in _grads(f, p)[1]], arrays, v)
    for got, want in zip(hv, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def check_third_order(f, arrays, rtol=1e-4, atol=1e-5):
    """``d/dx <H(x) v, u>`` against the central difference of ``H(x) v`` along ``w``, dotted with u."""
    rng = np.random.default_rng(2)
    v, u, w = ([rng.standard_normal(a.shape) for a in arrays] for _ in range(3))
    xs, gs = _grads(f, arrays, create_graph=True)
    inner = sum((g * paddle.to_tensor(d)).sum() for g, d in zip(gs, v, strict=True))
    hv = paddle.grad(inner, xs, create_graph=True)
    third = paddle.grad(sum((h * paddle.to_tensor(d)).sum() for h, d in zip(hv, u, strict=True)), xs)
    got = sum(float((t.numpy() * d).sum()) for t, d in zip(third, w, strict=True))
    fd = _directional(lambda p: _hvp(f, p, v)[1], arrays, w)
    want = sum(float((t * d).sum()) for t, d in zip(fd, u, strict=True))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _rand(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.default_rng(seed + len(shape)).uniform(low, high, shape)


def _sq(t):
    return (t * t).sum()


MATMUL = {
    "2d": (lambda x, w: _sq(paddle.matmul(x, w)), [(3, 4), (4, 5)]),
    "batched_x_2d_w": (lambda x, w: _sq(paddle.tanh(paddle.matmul(x, w))), [(2, 3, 4), (4, 5)]),
    "transposed": (lambda x, w: _sq(paddle.matmul(x, w, transpose_x=True, transpose_y=True)), [(4, 3), (5, 4)]),
    "broadcast_batch": (lambda x, w: _sq(paddle.matmul(x, w)), [(2, 3, 4), (1, 4, 2)]),
    "vector_matrix": (lambda x, w: _sq(paddle.matmul(x, w)), [(4,), (2, 4, 3)]),
    "matrix_vector": (lambda x, w: _sq(paddle.matmul(x, w)), [(3, 4), (4,)]),
}


@pytest.mark.parametrize("name", list(MATMUL))
def test_matmul_second_derivative(name):
    f, shapes = MATMUL[name]
    check_second_order(f, [_rand(*s, seed=i) for i, s in enumerate(shapes)])


def test_matmul_tanh_third_derivative():
    check_third_order(lambda x, w: paddle.tanh(paddle.matmul(x, w)).sum(), [_rand(3, 4), _rand(4, 2, seed=5)])


REDUCTIONS = {
    "sum_axis": lambda x: _sq(paddle.sum(x, axis=1)) + paddle.sum(x * x * x),
    "sum_keepdim": lambda x: (paddle.sum(x, axis=0, keepdim=True) * x).sum(),
    "mean": lambda x: _sq(paddle.mean(x, axis=[0, 1])) + paddle.mean(x * x, axis=1).sum(),
    "logsumexp": lambda x: _sq(paddle.logsumexp(x, axis=1)),
    "logsumexp_all": lambda x: paddle.logsumexp(x) * paddle.logsumexp(x, axis=0, keepdim=True).sum(),
    "p_norm_2": lambda x: _sq(paddle.linalg.norm(x, p=2, axis=1)),
    "p_norm_3": lambda x: paddle.linalg.vector_norm(x, p=3, axis=0).sum(),
    "p_norm_1": lambda x: _sq(paddle.linalg.vector_norm(x, p=1)),
    "var": lambda x: _sq(paddle.var(x, axis=1)),
    "prod": lambda x: paddle.prod(x, axis=1).sum(),
    "cumsum": lambda x: _sq(paddle.cumsum(x, axis=1)),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_second_derivative(name):
    check_second_order(REDUCTIONS[name], [_rand(3, 4, low=0.3, high=1.5) * np.array([1, -1, 1, -1])])


@pytest.mark.parametrize("name", ["logsumexp", "p_norm_2", "var", "sum_axis", "prod"])
def test_reduction_third_derivative(name):
    check_third_order(REDUCTIONS[name], [_rand(3, 4, low=0.3, high=1.5)])


def test_prod_at_zeros_second_derivative():
    """With a zero entry, d prod / d x_i is no longer ``out / x_i``; the vjp takes prefix and suffix
    products, and their derivative carries the second order (an earlier masked form had none)."""
    x = _rand(3, 4, low=0.5, high=1.5)
    x[0, 1] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    check_second_order(lambda t: paddle.prod(t, axis=1).sum(), [x])
    check_second_order(lambda t: paddle.prod(t), [x[:2]])


def _well_conditioned(n=3, seed=0):
    return _rand(n, n, seed=seed, low=-0.4, high=0.4) + 2 * np.eye(n)


def _sym(t):
    """A symmetric matrix from any square one, so a finite difference of one entry stays symmetric."""
    return (t + t.T) * 0.5 + paddle.to_tensor(3 * np.eye(t.shape[0]))


MATRIX = {
    "inv": lambda a: _sq(paddle.linalg.inv(a)),
    "det": lambda a: paddle.linalg.det(a) * paddle.linalg.det(a),
    "slogdet": lambda a: _sq(paddle.unbind(paddle.linalg.slogdet(a), 0)[1]),
    "solve": lambda a: _sq(paddle.linalg.solve(a, paddle.to_tensor(_rand(3, 2, seed=7)))),
    "cholesky_symmetrised": lambda a: _sq(paddle.linalg.cholesky(_sym(a))),
    "cholesky_upper_symmetrised": lambda a: _sq(paddle.linalg.cholesky(_sym(a), upper=True)),
    "einsum": lambda a: _sq(paddle.einsum("ij,jk->ik", a, a)) + paddle.einsum("ii->", a * a),
}


@pytest.mark.parametrize("name", list(MATRIX))
def test_matrix_function_second_derivative(name):
    check_second_order(MATRIX[name], [_well_conditioned()], rtol=1e-4, atol=1e-5)


def test_eigh_gradient_of_symmetrised_input():
    """eigh reads one triangle: its gradient is checked on ``sym(a)``, sign-free in the eigenvectors."""
    weights = paddle.to_tensor(_rand(3, 3, seed=9))

    def f(a):
        w, v = paddle.linalg.eigh(_sym(a) + paddle.to_tensor(np.diag([0.0, 1.0, 2.0])))
        return (w * w).sum() + (v * v * weights).sum()

    a = _well_conditioned()
    rng = np.random.default_rng(3)
    d = rng.standard_normal(a.shape)
    (g,) = _grads(f, [a])[1]
    fd = _directional(lambda p: [f(*_tensors(p)).numpy()], [a], [d])[0]
    np.testing.assert_allclose(float((g.numpy() * d).sum()), float(fd), rtol=1e-5)
