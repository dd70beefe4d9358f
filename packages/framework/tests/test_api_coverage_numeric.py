"""Paddle's smaller numeric functions and histograms added for issue 30 against real Paddle 3.3.1,
gradients included where Paddle has them."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, ShapeError

RNG = np.random.default_rng(30)
X = RNG.standard_normal((3, 4))


@pytest.mark.parametrize(
    ("fn", "arrays"),
    [
        (lambda P, a, b: P.add_n([a, b, a]), (X, X * 2)),
        (
            lambda P, i, a, b: P.baddbmm(i, a, b, beta=0.5, alpha=2.0),
            (RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 2))),
        ),
        (lambda P, a: P.diagflat(a, offset=-1), (RNG.standard_normal((2, 2)),)),
        (lambda P, a: P.msort(a), (X,)),
        (lambda P, a: P.matrix_transpose(a), (RNG.standard_normal((2, 3, 4)),)),
        (lambda P, a, b: P.cdist(a, b), (RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4)))),
        (lambda P, a, b: P.cdist(a, b, p=1.0), (X, RNG.standard_normal((2, 4)))),
        (lambda P, a: P.pdist(a), (RNG.standard_normal((4, 3)),)),
        (lambda P, a: P.pdist(a, p=3.0), (RNG.standard_normal((4, 3)),)),
        (lambda P, a: P.vander(a, n=4), (RNG.standard_normal(3),)),
        (lambda P, a: P.vander(a, increasing=True), (RNG.standard_normal(3),)),
        (lambda P, a: P.trapezoid(a, dx=0.5), (X,)),
        (lambda P, a, b: P.trapezoid(a, b, axis=0), (X, np.array([0.0, 0.5, 2.0]))),
        (lambda P, a: P.cumulative_trapezoid(a, axis=1), (X,)),
        (lambda P, a, b: P.cumulative_trapezoid(a, b), (X, np.sort(RNG.standard_normal((3, 4)), axis=1))),
        (lambda P, a: P.combinations(a, 2), (RNG.standard_normal(4),)),
        (lambda P, a: P.combinations(a, 3, with_replacement=True), (RNG.standard_normal(3),)),
        (lambda P, a: P.renorm(a, 2.0, 0, 1.0), (X,)),
        (lambda P, a: P.sinc(a), (np.array([0.0, 0.3, -1.5, 2.0]),)),
        (lambda P, a: P.stanh(a, 0.5, 2.0), (X,)),
        (lambda P, a, b: P.reduce_as(a, b), (RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 1)))),
        (lambda P, a, e: P.ldexp(a, e), (X, RNG.integers(-3, 4, (3, 4)))),
        (lambda P, a: P.gammaln(a), (RNG.uniform(0.5, 4, (3, 4)),)),
        (lambda P, a: P.multigammaln(a, 3), (RNG.uniform(1.5, 4, (3, 4)),)),
        (lambda P, a, b: P.nextafter(a, b), (X, RNG.standard_normal(4))),
        (lambda P, a: P.frexp(a)[0] + P.frexp(a)[1], (X * 10,)),
        (lambda P, a: P.increment(a, 2.5), (np.array([1.5]),)),
    ],
)
def test_numeric_functions_match_paddle(real_paddle, fn, arrays):
    compare(real_paddle, lambda P: lambda *t: fn(P, *t), *arrays, rtol=1e-5, atol=1e-8)


def test_shape_functions_match_paddle(real_paddle):
    assert ours.broadcast_shapes([2, 1, 3], [4, 1]) == list(real_paddle.broadcast_shapes([2, 1, 3], [4, 1]))
    t = np.zeros((2, 3, 4))
    assert ours.rank(ours.to_tensor(t)).numpy() == real_paddle.rank(real_paddle.to_tensor(t)).numpy()


@pytest.mark.parametrize(
    "kwargs",
    [{"bins": 5}, {"bins": 4, "min": -1.0, "max": 1.0}, {"bins": 3, "density": True}, {"bins": 4, "weight": 1}],
)
def test_histogram_matches_paddle(real_paddle, kwargs):
    x, w = RNG.standard_normal(30), RNG.uniform(0, 1, 30)

    def build(P):
        kw = {k: P.to_tensor(w) if k == "weight" else v for k, v in kwargs.items()}
        return lambda t: P.histogram(t, **kw)

    compare(real_paddle, build, x)
    edges = {k: v for k, v in kwargs.items() if k in ("bins", "min", "max")}
    compare(real_paddle, lambda P: lambda t: P.histogram_bin_edges(t, **edges), x)


@pytest.mark.parametrize("kwargs", [{"bins": 3}, {"bins": [2, 4], "ranges": [-1.0, 1.0, 0.0, 2.0], "density": True}])
def test_histogramdd_matches_paddle(real_paddle, kwargs):
    x, w = RNG.standard_normal((20, 2)), RNG.uniform(0, 1, 20)

    def part(h, k):
        return h[0] if k == 0 else h[1][k - 1]

    for k in range(3):
        build = lambda P, k=k: lambda t, u: part(P.histogramdd(t, weights=u, **kwargs), k)  # noqa: E731
        compare(real_paddle, build, x, w)


def test_bad_arguments_name_the_fix():
    x = ours.to_tensor(X)
    with pytest.raises(ShapeError, match="share M"):
        ours.cdist(x, ours.ones([2, 3]))
    with pytest.raises(ConfigError, match="bins"):
        ours.histogram(x, bins=0)
    with pytest.raises(ConfigError, match="x or dx"):
        ours.trapezoid(x, x, dx=1.0)
    with pytest.raises(ShapeError, match="broadcast"):
        ours.broadcast_shapes([2, 3], [4])


@pytest.mark.parametrize("repeats", [2, [2, 3], [2, 1, 3]])
def test_tensor_repeat_tiles_as_paddle(real_paddle, repeats):
    compare(real_paddle, lambda P: lambda t: t.repeat(repeats), RNG.standard_normal((2, 2)))


@pytest.mark.parametrize("args", [(5,), (3, 9, 2.0), (4.999,), (1.0, 0.0, -0.25)])
def test_range_includes_its_end_as_paddle(real_paddle, args):
    got, want = ours.range(*args), real_paddle.range(*args)
    assert got.dtype == np.dtype(str(want.numpy().dtype))
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_crop_from_numpy_and_size_match_paddle(real_paddle):
    compare(real_paddle, lambda P: lambda t: P.crop(t, [2, -1], [1, 1]), X)
    assert ours.from_numpy(np.arange(3)).numpy().tolist() == [0, 1, 2]
    assert ours.Size([2, 3, 4]).numel() == real_paddle.Size([2, 3, 4]).numel() == 24
    assert repr(ours.Size([2, 3])) == repr(real_paddle.Size([2, 3]))
    with pytest.raises(ShapeError, match="leave"):
        ours.crop(ours.to_tensor(X), [4, 4])
