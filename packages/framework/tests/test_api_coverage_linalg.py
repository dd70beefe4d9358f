"""The paddle.linalg functions added for issue 30 against real Paddle 3.3.1, gradients included:
lu/lu_unpack/lu_solve, matrix_exp, triangular/cholesky solves, cholesky_inverse, lstsq, matrix_rank,
svdvals, vecdot, cov, corrcoef, householder_product."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, ShapeError

RNG = np.random.default_rng(30)


def well(*shape):
    n = shape[-1]
    return RNG.uniform(-0.5, 0.5, shape) + 2 * np.eye(n)


def lower(n):
    return np.tril(RNG.uniform(-0.5, 0.5, (n, n))) + 2 * np.eye(n)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_lu_and_unpack_match_paddle_with_gradients(real_paddle, shape):
    a = RNG.standard_normal(shape)
    compare(real_paddle, lambda P: lambda x: P.linalg.lu(x)[0], a, rtol=1e-6, atol=1e-8)
    compare(real_paddle, lambda P: lambda x: P.linalg.lu(x, get_infos=True)[1], a)

    def unpacked(P):
        def fn(x):
            packed, piv = P.linalg.lu(x)
            perm, low, up = P.linalg.lu_unpack(packed, piv)
            return perm.sum() + (low * 2).sum() + (up * 3).sum()

        return fn

    compare(real_paddle, unpacked, a, rtol=1e-6, atol=1e-8)


def test_lu_reconstructs_its_input():
    a = RNG.standard_normal((2, 4, 3))
    packed, piv = ours.linalg.lu(ours.to_tensor(a))
    perm, low, up = ours.linalg.lu_unpack(packed, piv)
    np.testing.assert_allclose((perm @ low @ up).numpy(), a, atol=1e-12)


def test_lu_solve_matches_paddle(real_paddle):
    compare(
        real_paddle,
        lambda P: lambda a, b: P.linalg.lu_solve(b, *P.linalg.lu(a)),
        well(3, 3), RNG.standard_normal((3, 2)), rtol=1e-6, atol=1e-8,
    )  # fmt: skip


@pytest.mark.parametrize("a", [RNG.uniform(-1, 1, (3, 3)), RNG.uniform(-3, 3, (2, 3, 3))])
def test_matrix_exp_matches_paddle(real_paddle, a):
    compare(real_paddle, lambda P: lambda x: P.linalg.matrix_exp(x), a, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(
    ("fn", "arrays"),
    [
        (lambda P, a, b: P.linalg.triangular_solve(a, b, upper=False), (lower(3), RNG.standard_normal((3, 2)))),
        (lambda P, a, b: P.linalg.triangular_solve(a, b, transpose=True), (lower(3).T, RNG.standard_normal((3, 2)))),
        (
            lambda P, a, b: P.linalg.triangular_solve(a, b, unitriangular=True),
            (lower(3).T, RNG.standard_normal((3, 1))),
        ),
        (lambda P, b, u: P.linalg.cholesky_solve(b, u), (RNG.standard_normal((3, 2)), lower(3))),
        (lambda P, b, u: P.linalg.cholesky_solve(b, u, upper=True), (RNG.standard_normal((3, 2)), lower(3).T)),
        (lambda P, a, b: P.linalg.vecdot(a, b, axis=0), (RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)))),
    ],
)
def test_solves_match_paddle(real_paddle, fn, arrays):
    compare(real_paddle, lambda P: lambda *t: fn(P, *t), *arrays, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_matches_paddle(real_paddle, upper):
    factor = lower(3).T if upper else lower(3)
    compare(real_paddle, lambda P: lambda u: P.linalg.cholesky_inverse(u, upper=upper), factor, rtol=1e-6, atol=1e-8)


def test_svdvals_and_householder_product_match_paddle(real_paddle, gradcheck):
    """Paddle's householder_product gradient fails (an in-place write it then differentiates through):
    the values are compared with Paddle, the gradient with finite differences."""
    compare(real_paddle, lambda P: lambda x: P.linalg.svdvals(x), RNG.standard_normal((2, 4, 3)), rtol=1e-6)
    x, tau = RNG.standard_normal((2, 4, 3)), RNG.uniform(0.5, 1.5, (2, 2))
    compare(real_paddle, lambda P: P.linalg.householder_product, x, tau, rtol=1e-6, atol=1e-8, grads=False)
    gradcheck(ours.linalg.householder_product, x, tau)


@pytest.mark.parametrize("kwargs", [{}, {"rowvar": False}, {"ddof": False}, {"fweights": 1}, {"aweights": 1}])
def test_cov_and_corrcoef_match_paddle(real_paddle, kwargs):
    x = RNG.standard_normal((3, 5))
    weights = {"fweights": np.array([1, 2, 1, 3, 1]), "aweights": np.array([0.5, 1.0, 2.0, 1.0, 0.3])}

    def build(P):
        kw = {k: P.to_tensor(weights[k]) if k in weights else v for k, v in kwargs.items()}
        return lambda t: P.linalg.cov(t, **kw)

    compare(real_paddle, build, x, rtol=1e-6, atol=1e-8)
    if set(kwargs) <= {"rowvar"}:
        compare(real_paddle, lambda P: lambda t: P.linalg.corrcoef(t, **kwargs), x, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_matches_paddle(real_paddle, gradcheck, driver):
    """Paddle's lstsq has no gradient; ours is pinv's, checked by finite differences."""
    x, y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    for k in range(4):
        build = lambda P, k=k: lambda a, b: P.linalg.lstsq(a, b, driver=driver)[k]  # noqa: E731
        compare(real_paddle, build, x, y, rtol=1e-6, atol=1e-8, grads=False)
    gradcheck(lambda a, b: ours.linalg.lstsq(a, b, driver=driver)[0], x, y)


@pytest.mark.parametrize("kwargs", [{}, {"tol": 0.5}, {"hermitian": True}, {"atol": 0.1, "rtol": 0.2}])
def test_matrix_rank_matches_paddle(real_paddle, kwargs):
    x = RNG.standard_normal((2, 4, 2)) @ RNG.standard_normal((2, 2, 4))
    x = x + np.swapaxes(x, -1, -2) if kwargs.get("hermitian") else x
    compare(real_paddle, lambda P: lambda t: P.linalg.matrix_rank(t, **kwargs), x)


def test_bad_arguments_name_the_fix():
    x = ours.to_tensor(RNG.standard_normal((3, 2)))
    with pytest.raises(ConfigError, match="driver"):
        ours.linalg.lstsq(x, x, driver="magic")
    with pytest.raises(ShapeError, match="1-D or 2-D"):
        ours.linalg.cov(ours.zeros([2, 2, 2]))
    with pytest.raises(ShapeError, match="square"):
        ours.linalg.matrix_exp(x)
