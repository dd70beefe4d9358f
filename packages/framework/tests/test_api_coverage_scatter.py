"""Paddle's scatter family added for issue 30 against real Paddle 3.3.1, gradients included."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, ShapeError

RNG = np.random.default_rng(30)
X = RNG.standard_normal((3, 4))
IDX = np.array([[0, 1, 2, 0], [1, 2, 0, 1]])
SRC = RNG.standard_normal((2, 4))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amin", "amax"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_paddle(real_paddle, reduce, include_self):
    def build(P):
        return lambda x, s: P.scatter_reduce(x, 0, P.to_tensor(IDX), s, reduce, include_self=include_self)

    compare(real_paddle, build, X, SRC)


@pytest.mark.parametrize(
    ("fn", "arrays"),
    [
        (lambda P, x, s: P.scatter_add(x, 0, P.to_tensor(IDX), s), (X, SRC)),
        (lambda P, u: P.scatter_nd(P.to_tensor([[1], [2], [1]]), u, [4, 4]), (RNG.standard_normal((3, 4)),)),
        (lambda P, x, v: P.index_put(x, (P.to_tensor([0, 2]), P.to_tensor([1, 3])), v), (X, RNG.standard_normal(2))),
        (lambda P, x, v: P.index_put(x, (P.to_tensor([0, 0]),), v, accumulate=True), (X, RNG.standard_normal(4))),
        (lambda P, x, v: P.select_scatter(x, v, 1, 2), (X, RNG.standard_normal(3))),
        (lambda P, x, v: P.slice_scatter(x, v, [1], [0], [4], [2]), (X, RNG.standard_normal((3, 2)))),
        (lambda P, x, v: P.slice_scatter(x, v, [0, 1], [1, 1], [3, 4], [1, 2]), (X, RNG.standard_normal((1, 2)))),
        (lambda P, x, v: P.masked_scatter(x, P.to_tensor(X > 0), v), (X, RNG.standard_normal(12))),
        (lambda P, x: P.index_sample(x, P.to_tensor(IDX[:, :3].repeat(2, 0)[:3])), (X,)),
        (lambda P, a, b: P.multiplex([a, b], P.to_tensor([[1], [0], [1]], dtype="int32")), (X, X + 1)),
    ],
)
def test_scatter_family_matches_paddle(real_paddle, fn, arrays):
    compare(real_paddle, lambda P: lambda *t: fn(P, *t), *arrays)


def test_diagonal_scatter_matches_paddle_and_differentiates(real_paddle, gradcheck):
    """Paddle gives the scattered diagonal no gradient; the values flow into the output, so ours
    has one (checked by finite differences)."""
    y = RNG.standard_normal(3)
    compare(real_paddle, lambda P: lambda x, v: P.diagonal_scatter(x, v, offset=1), X, y, grads=False)
    gradcheck(lambda x, v: ours.diagonal_scatter(x, v, offset=1), X, y)


def test_shard_index_matches_paddle(real_paddle):
    labels = RNG.integers(0, 20, (6, 1))
    compare(real_paddle, lambda P: lambda t: P.shard_index(t, 20, 3, 1), labels)


def test_bad_arguments_name_the_problem():
    x = ours.to_tensor(X)
    with pytest.raises(ConfigError, match="reduce must be one of"):
        ours.scatter_reduce(x, 0, ours.to_tensor(IDX), ours.to_tensor(SRC), "median")
    with pytest.raises(ShapeError, match="do not broadcast"):
        ours.select_scatter(x, ours.ones([5]), 1, 0)
    with pytest.raises(ShapeError, match="selects"):
        ours.masked_scatter(x, ours.to_tensor(X > 0), ours.ones([1]))


@pytest.mark.parametrize(
    ("shape", "kwargs"), [((4, 3), {}), ((3, 5), {"offset": 1}), ((7, 3), {"wrap": True}), ((3, 3, 3), {})]
)
def test_fill_diagonal_in_place_matches_paddle(real_paddle, shape, kwargs):
    def run(P):
        x = P.ones(list(shape)) * 2
        x.fill_diagonal_(5.0, **kwargs)
        return x.numpy()

    np.testing.assert_array_equal(run(ours), run(real_paddle))


def test_fill_diagonal_tensor_matches_paddle(real_paddle):
    y = RNG.standard_normal(3)
    compare(real_paddle, lambda P: lambda x, v: x.fill_diagonal_tensor(v), X, y, grads=False)

    def in_place(P):
        x = P.to_tensor(X)
        x.fill_diagonal_tensor_(P.to_tensor(y), offset=1)
        return x.numpy()

    np.testing.assert_allclose(in_place(ours), in_place(real_paddle))
