"""Order statistics, unique/searchsorted/bincount and samplers (ops/search.py) against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


TIES = np.array([[1.0, 3.0, 2.0, 2.0], [4.0, 4.0, 1.0, 1.0], [5.0, 0.0, 5.0, 0.0]], "float32")
# no ties among the non-NaN values: Paddle shares a tied median's gradient among all equal entries
NANS = np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, 4.0, 1.25, 0.5], [2.5, 1.5, 0.0, -1.0]], "float32")

STATS = [
    (lambda P, x: P.median(x), r(3, 4)),
    (lambda P, x: P.median(x, axis=1), r(3, 4)),
    (lambda P, x: P.median(x, axis=0, keepdim=True), r(5, 2)),
    (lambda P, x: P.median(x, axis=1, mode="min")[0], TIES),
    (lambda P, x: P.nanmedian(x, axis=1), NANS),
    (lambda P, x: P.nanmedian(x), NANS),
    (lambda P, x: P.quantile(x, 0.3, axis=1), r(3, 5)),
    (lambda P, x: P.quantile(x, [0.25, 0.5, 0.9], axis=0, keepdim=True), r(4, 3)),
    (lambda P, x: P.quantile(x, 0.4, axis=[0, 2]), r(2, 3, 4)),
    (lambda P, x: P.quantile(x, 0.4, axis=1, interpolation="lower"), r(3, 5)),
    (lambda P, x: P.quantile(x, 0.4, axis=1, interpolation="higher"), r(3, 5)),
    (lambda P, x: P.quantile(x, 0.4, axis=1, interpolation="midpoint"), r(3, 5)),
    (lambda P, x: P.quantile(x, 0.6, axis=1, interpolation="nearest"), r(3, 6)),
    (lambda P, x: P.nanquantile(x, 0.3, axis=1), NANS),
    (lambda P, x: P.kthvalue(x, 2)[0], TIES),
    (lambda P, x: P.kthvalue(x, 1, axis=0, keepdim=True)[0], r(3, 4)),
    (lambda P, x: P.mode(x)[0], TIES),
    (lambda P, x: P.mode(x, axis=0, keepdim=True)[0], TIES),
]


@pytest.mark.parametrize("fn,a", STATS)
def test_order_statistics_match_paddle(real_paddle, fn, a):
    compare(real_paddle, lambda P: lambda x: fn(P, x), a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda P, x: P.median(x, axis=1, mode="min")[1],
        lambda P, x: P.kthvalue(x, 2)[1],
        lambda P, x: P.kthvalue(x, 3, axis=0)[1],
        lambda P, x: P.mode(x)[1],
        lambda P, x: P.mode(x, axis=0)[1],
    ],
)
def test_indices_match_paddle(real_paddle, fn):
    got = fn(ours, ours.to_tensor(TIES))
    want = fn(real_paddle, real_paddle.to_tensor(TIES))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_median_gradient_by_finite_differences(gradcheck):
    gradcheck(lambda x: ours.median(x, axis=1), r(3, 4))
    gradcheck(lambda x: ours.quantile(x, [0.2, 0.7], axis=0), r(5, 2))


@pytest.mark.parametrize(
    "kwargs", [{}, {"return_index": True, "return_inverse": True, "return_counts": True}, {"return_counts": True}]
)
def test_unique_matches_paddle(real_paddle, kwargs):
    a = np.array([3, 1, 2, 1, 3, 3], "int64")
    got, want = ours.unique(ours.to_tensor(a), **kwargs), real_paddle.unique(real_paddle.to_tensor(a), **kwargs)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    m = np.array([[1, 2], [0, 1], [1, 2]], "int64")
    got = ours.unique(ours.to_tensor(m), return_inverse=True, axis=0)
    want = real_paddle.unique(real_paddle.to_tensor(m), return_inverse=True, axis=0)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    got = ours.unique_consecutive(ours.to_tensor(a[[0, 0, 1, 1, 2]]), return_inverse=True, return_counts=True)
    want = real_paddle.unique_consecutive(
        real_paddle.to_tensor(a[[0, 0, 1, 1, 2]]), return_inverse=True, return_counts=True
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_searchsorted_bucketize_bincount_match_paddle(real_paddle):
    seq = np.array([[1, 3, 5, 7], [2, 4, 6, 8]], "float32")
    vals = np.array([[3, 6], [0, 9]], "float32")
    for kwargs in ({}, {"right": True}, {"out_int32": True}):
        got = ours.searchsorted(ours.to_tensor(seq), ours.to_tensor(vals), **kwargs)
        want = real_paddle.searchsorted(real_paddle.to_tensor(seq), real_paddle.to_tensor(vals), **kwargs)
        assert got.dtype == np.dtype(str(want.numpy().dtype))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = ours.bucketize(ours.to_tensor(vals), ours.to_tensor(seq[0]))
    np.testing.assert_array_equal(
        got.numpy(), real_paddle.bucketize(real_paddle.to_tensor(vals), real_paddle.to_tensor(seq[0]))
    )
    x = np.array([1, 1, 3, 0], "int64")
    w = np.array([0.5, 1.0, 2.0, 0.25], "float32")
    for args in ({}, {"minlength": 6}):
        np.testing.assert_array_equal(
            ours.bincount(ours.to_tensor(x), **args).numpy(), real_paddle.bincount(real_paddle.to_tensor(x), **args)
        )
    got = ours.bincount(ours.to_tensor(x), weights=ours.to_tensor(w))
    want = real_paddle.bincount(real_paddle.to_tensor(x), weights=real_paddle.to_tensor(w))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want.numpy())


def test_samplers_follow_seed_and_distribution():
    probs = ours.to_tensor([[0.1, 0.0, 0.9], [0.5, 0.5, 0.0]])
    ours.seed(3)
    a = ours.multinomial(probs, 1000, replacement=True)
    ours.seed(3)
    b = ours.multinomial(probs, 1000, replacement=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.shape == [2, 1000] and a.dtype == np.int64
    assert not np.any(a.numpy()[0] == 1) and not np.any(a.numpy()[1] == 2)
    assert 0.85 < np.mean(a.numpy()[0] == 2) < 0.95
    c = ours.multinomial(ours.to_tensor([0.2, 0.3, 0.5]), 3)
    assert sorted(c.tolist()) == [0, 1, 2]
    d = ours.bernoulli(ours.full([4000], 0.25))
    assert d.dtype == np.float32 and set(np.unique(d.numpy())) <= {0.0, 1.0} and 0.2 < d.numpy().mean() < 0.3
    assert ours.bernoulli(ours.zeros([5]), p=1.0).numpy().sum() == 5


def test_errors_are_typed():
    with pytest.raises(ValueError, match="without replacement"):
        ours.multinomial(ours.to_tensor([0.5, 0.5]), 3)
    with pytest.raises(ValueError, match="k must be"):
        ours.kthvalue(ours.rand([3]), 4)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ours.quantile(ours.rand([3]), 1.5)
    with pytest.raises(DTypeError, match="float"):  # median takes integers, as Paddle (test_api_coverage_misc)
        ours.quantile(ours.to_tensor([1, 2, 3]), 0.5)
    with pytest.raises(DTypeError, match="integer"):
        ours.bincount(ours.rand([3]))
    with pytest.raises(ShapeError, match="leading dims"):
        ours.searchsorted(ours.rand([2, 3]), ours.rand([3, 1]))
    with pytest.raises(ValueError, match="interpolation"):
        ours.quantile(ours.rand([3]), 0.5, interpolation="cubic")


@pytest.mark.parametrize(
    "fn",
    [
        lambda P, x: P.cummax(x, axis=1),
        lambda P, x: P.cummin(x, axis=1),
        lambda P, x: P.cummax(x),
        lambda P, x: P.cummin(x, axis=0, dtype="int32"),
    ],
)
def test_cumulative_extrema_match_paddle(real_paddle, fn):
    a = np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [2.0, 1.0, 2.0, 0.0, 2.0]], "float32")
    compare(real_paddle, lambda P: lambda x: fn(P, x)[0], a)
    got, want = fn(ours, ours.to_tensor(a))[1], fn(real_paddle, real_paddle.to_tensor(a))[1]
    assert got.dtype == np.dtype(str(want.numpy().dtype))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
