"""paddle.distribution on its own: gradients against finite differences (log-densities and
reparameterised samples), sample moments, paddle.seed reproducibility, argument validation, and
the lgamma/digamma/polygamma functions against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from test_distribution_oracle import CASES

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DTypeError, ShapeError
from paddlectl.framework.ops import special

D = paddle.distribution


def _fd_check(fn, arrays, h=1e-6, rtol=1e-5, atol=1e-7):
    """Autograd gradients of ``sum(fn(*tensors) * c)`` against central differences, float64."""
    tensors = [paddle.to_tensor(a, stop_gradient=a.dtype.kind != "f") for a in arrays]
    out = fn(*tensors)
    cot = np.random.default_rng(3).standard_normal(out.shape)
    cot[~np.isfinite(out.numpy())] = 0.0  # a NaN/inf output (StudentT's mean for df <= 1) has no derivative
    (out * paddle.to_tensor(cot)).sum().backward()
    for i, a in enumerate(arrays):
        if a.dtype.kind != "f":
            continue
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus, minus = [x.copy() for x in arrays], [x.copy() for x in arrays]
            plus[i][idx] += h
            minus[i][idx] -= h
            f = lambda xs: float(np.nansum(fn(*[paddle.to_tensor(x) for x in xs]).numpy() * cot))  # noqa: E731
            numeric[idx] = (f(plus) - f(minus)) / (2 * h)
        got = tensors[i].grad.numpy() if tensors[i].grad is not None else np.zeros_like(a)
        np.testing.assert_allclose(got, numeric, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")


SYMMETRIC = {"mvn-cov-log_prob", "mvn-prec-log_prob", "mvn-entropy", "mvn-variance", "mvn-kl"}
"""Cases with a covariance/precision input: Cholesky reads its lower triangle, so a finite difference
of one entry is not the symmetric gradient autograd (and Paddle) give; the oracle test checks them."""
FD_CASES = [c for c in CASES if c[0] not in SYMMETRIC]


@pytest.mark.parametrize(("build", "arrays"), [c[1:] for c in FD_CASES], ids=[c[0] for c in FD_CASES])
def test_gradients_match_finite_differences(build, arrays):
    _fd_check(lambda *t: build(D, *t), arrays)


@pytest.mark.parametrize("case", sorted(SYMMETRIC))
def test_symmetric_matrix_gradients_match_symmetric_finite_differences(case):
    """For a covariance/precision input the derivative along E_ij + E_ji is G_ij + G_ji."""
    build, arrays = next(c[1:] for c in CASES if c[0] == case)
    tensors = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    build(D, *tensors).sum().backward()
    f = lambda xs: float(build(D, *[paddle.to_tensor(x) for x in xs]).numpy().sum())  # noqa: E731
    h = 1e-6
    for k, a in enumerate(arrays):
        g = np.zeros_like(a) if tensors[k].grad is None else tensors[k].grad.numpy()
        for idx in np.ndindex(a.shape):
            step = np.zeros_like(a)
            step[idx] += h
            mirrored = a.ndim == 2 and a.shape[0] == a.shape[1] and idx[0] != idx[1]
            if mirrored:
                step[idx[::-1]] += h
            plus, minus = list(arrays), list(arrays)
            plus[k], minus[k] = a + step, a - step
            numeric = (f(plus) - f(minus)) / (2 * h)
            analytic = g[idx] + g[idx[::-1]] if mirrored else g[idx]
            np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7, err_msg=f"{case} input {k} {idx}")


def _seeded(fn):
    def run(*t):
        paddle.seed(11)
        return fn(*t)

    return run


RSAMPLES = [
    ("normal", lambda m, s: D.Normal(m, s).rsample([4]), (np.array([0.3, -1.0]), np.array([1.5, 0.7]))),
    ("uniform", lambda lo, w: D.Uniform(lo, lo + w).rsample([4]), (np.array([0.3, -1.0]), np.array([1.5, 0.7]))),
    ("exponential", lambda r: D.Exponential(r).rsample([4]), (np.array([1.5, 0.7]),)),
    ("gamma-rate", lambda r: D.Gamma(r * 0 + 2.5, r).rsample([4]), (np.array([1.5, 0.7]),)),
    ("laplace", lambda m, s: D.Laplace(m, s).rsample([4]), (np.array([0.3, -1.0]), np.array([1.5, 0.7]))),
    ("cauchy", lambda m, s: D.Cauchy(m, s).rsample([4]), (np.array([0.3, -1.0]), np.array([1.5, 0.7]))),
    ("gumbel", lambda m, s: D.Gumbel(m, s).rsample([4]), (np.array([0.3, -1.0]), np.array([1.5, 0.7]))),
    ("lognormal", lambda m, s: D.LogNormal(m, s).rsample([4]), (np.array([0.3, -1.0]), np.array([0.5, 0.7]))),
    ("cbernoulli", lambda p: D.ContinuousBernoulli(p).rsample([4]), (np.array([0.2, 0.7]),)),
    ("bernoulli-relaxed", lambda p: D.Bernoulli(p).rsample([4], temperature=0.5), (np.array([0.2, 0.7]),)),
    (
        "mvn",
        lambda m, c: D.MultivariateNormal(m, scale_tril=c).rsample([4]),
        (np.array([0.3, -1.0]), np.array([[2.0, 0.0], [0.3, 1.0]])),
    ),
    (
        "transformed",
        lambda m, s: D.TransformedDistribution(D.Normal(m, s), [D.TanhTransform()]).rsample([4]),
        (np.array([0.3, -1.0]), np.array([0.5, 0.7])),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "arrays"), [r[1:] for r in RSAMPLES], ids=[r[0] for r in RSAMPLES])
def test_rsample_gradients_match_finite_differences(fn, arrays):
    """The same seeded draw moved by the parameters: d(sample)/d(parameter) by reparameterisation."""
    _fd_check(_seeded(fn), arrays, rtol=1e-4, atol=1e-6)


def test_rsample_loss_gradient_estimates_the_true_gradient():
    """d/d(scale) E[x^2] = 2 scale for x ~ Normal(loc, scale): the pathwise estimate over many draws."""
    paddle.seed(5)
    loc = paddle.to_tensor(np.array(0.5), stop_gradient=False)
    scale = paddle.to_tensor(np.array(1.3), stop_gradient=False)
    (D.Normal(loc, scale).rsample([200_000]) ** 2).mean().backward()
    assert abs(float(scale.grad) - 2 * 1.3) < 0.02 and abs(float(loc.grad) - 2 * 0.5) < 0.02


MOMENTS = [
    D.Normal(np.array([0.5, -1.0]), np.array([1.5, 0.3])),
    D.Uniform(np.array([0.5, -1.0]), np.array([1.5, 0.3])),
    D.Bernoulli(np.array([0.2, 0.7])),
    D.Beta(np.array([0.5, 2.0]), np.array([1.5, 3.0])),
    D.Dirichlet(np.array([0.5, 2.0, 1.0])),
    D.Multinomial(7, np.array([0.2, 0.3, 0.5])),
    D.Gamma(np.array([0.5, 3.0]), np.array([1.5, 2.0])),
    D.Chi2(np.array([2.0, 5.0])),
    D.Exponential(np.array([0.5, 3.0])),
    D.Laplace(np.array([0.5, -1.0]), np.array([1.5, 0.3])),
    D.LogNormal(np.array([0.0, -1.0]), np.array([0.5, 0.3])),
    D.Gumbel(np.array([0.5, -1.0]), np.array([1.5, 0.3])),
    D.Geometric(np.array([0.2, 0.7])),
    D.Poisson(np.array([0.5, 6.0])),
    D.Binomial(np.array([5.0, 20.0]), np.array([0.2, 0.7])),
    D.StudentT(np.array([5.0, 9.0]), np.array([0.5, -1.0]), np.array([1.5, 0.3])),
    D.ContinuousBernoulli(np.array([0.2, 0.7, 0.5])),
    D.MultivariateNormal(np.array([0.5, -1.0]), covariance_matrix=np.array([[2.0, 0.3], [0.3, 1.0]])),
]


@pytest.mark.parametrize("dist", MOMENTS, ids=lambda d: type(d).__name__)
def test_sample_moments(dist):
    """Sample mean and variance of 40000 seeded draws within 5 standard errors of the closed forms."""
    paddle.seed(2024)
    n = 40_000
    x = dist.sample([n]).numpy().astype(np.float64)
    mean, var = dist.mean.numpy(), dist.variance.numpy()
    assert x.shape == (n, *dist.batch_shape, *dist.event_shape)
    np.testing.assert_array_less(np.abs(x.mean(0) - mean), 5 * np.sqrt(var / n) + 1e-12)
    fourth = ((x - mean) ** 4).mean(0)
    np.testing.assert_array_less(np.abs(x.var(0) - var), 5 * np.sqrt(np.maximum(fourth - var**2, 0) / n) + 1e-12)


def test_categorical_sample_frequencies():
    paddle.seed(3)
    logits = np.log(np.array([0.1, 0.6, 0.3]))
    counts = np.bincount(D.Categorical(logits).sample([30_000]).numpy(), minlength=3) / 30_000
    np.testing.assert_allclose(counts, [0.1, 0.6, 0.3], atol=0.015)


def test_paddle_seed_repeats_every_sampler():
    def draws():
        paddle.seed(99)
        return [d.sample([3]).numpy() for d in MOMENTS]

    for a, b in zip(draws(), draws(), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: D.Normal(0.0, -1.0), ConfigError),
        (lambda: D.Normal([0.0, 1.0], [1.0, 1.0, 1.0]), ShapeError),
        (lambda: D.Normal("a", 1.0), DTypeError),
        (lambda: D.Uniform(1.0, 0.0), ConfigError),
        (lambda: D.Bernoulli(1.5), ConfigError),
        (lambda: D.Geometric(0.0), ConfigError),
        (lambda: D.Binomial(3.5, 0.5), ConfigError),
        (lambda: D.Multinomial(0, [0.5, 0.5]), ConfigError),
        (lambda: D.Dirichlet(np.ones(())), ShapeError),
        (lambda: D.Gamma(1.0, 0.0), ConfigError),
        (lambda: D.StudentT(-1.0, 0.0, 1.0), ConfigError),
        (lambda: D.MultivariateNormal(np.zeros(2)), ConfigError),
        (lambda: D.MultivariateNormal(np.zeros(2), covariance_matrix=np.eye(3)), ShapeError),
        (lambda: D.MultivariateNormal(np.zeros(2), covariance_matrix=-np.eye(2)), ConfigError),
        (lambda: D.Independent(D.Normal(0.0, 1.0), 1), ConfigError),
        (lambda: D.AffineTransform(0.0, 1.0), DTypeError),
        (lambda: D.ReshapeTransform((2, 3), (4,)), ShapeError),
        (lambda: D.Normal(0.0, 1.0).sample(3), DTypeError),
        (lambda: D.Normal(0.0, 1.0).sample([-1]), ConfigError),
        (lambda: D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0)), NotImplementedError),
        (lambda: special.polygamma(paddle.to_tensor([1.0]), -1), ConfigError),
    ],
)
def test_invalid_arguments_raise_typed_errors(make, error):
    with pytest.raises(error):
        make()


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return paddle.to_tensor(42.0)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 2.0))) == 42.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))) == 0.0


def test_uniform_kl_is_the_closed_form():
    """Paddle 3.3.1 has no Uniform-Uniform KL; ours is log of the width ratio, inf when not nested."""
    kl = D.kl_divergence(
        D.Uniform(np.array([0.0, 0.0]), np.array([1.0, 3.0])), D.Uniform(np.array([-1.0, 0.0]), np.array([2.0, 2.0]))
    )
    np.testing.assert_allclose(kl.numpy(), [np.log(3.0), np.inf])


def test_special_functions_match_scipy():
    sp = pytest.importorskip("scipy.special", reason="SciPy is the reference for the special functions")
    x = np.array([0.05, 0.5, 1.0, 2.5, 7.3, 20.0, 150.0])
    t = paddle.to_tensor(x)
    np.testing.assert_allclose(special.lgamma(t).numpy(), sp.gammaln(x), rtol=1e-13)
    np.testing.assert_allclose(special.digamma(t).numpy(), sp.digamma(x), rtol=1e-12)
    xn = np.array([-2.5, -0.3])
    np.testing.assert_allclose(special.digamma(paddle.to_tensor(xn)).numpy(), sp.digamma(xn), rtol=1e-12)
    for n in (1, 2, 3, 5):
        np.testing.assert_allclose(special.polygamma(t, n).numpy(), sp.polygamma(n, x), rtol=1e-12)


def test_special_functions_differentiate_to_third_order():
    x = paddle.to_tensor(np.array([0.7, 2.0, 5.0]), stop_gradient=False)
    (g1,) = paddle.grad(special.lgamma(x).sum(), [x], create_graph=True)
    (g2,) = paddle.grad(g1.sum(), [x], create_graph=True)
    (g3,) = paddle.grad(g2.sum(), [x])
    np.testing.assert_allclose(g1.numpy(), special.digamma(x).numpy())
    np.testing.assert_allclose(g3.numpy(), special.polygamma(x, 2).numpy())


def test_log_densities_trace_with_to_static():
    """log_prob/entropy are ops on the parameters, so a traced function gives the eager numbers."""

    def f(m, s, v):
        return (
            D.Normal(m, s).log_prob(v)
            + D.Gamma(s, s + 1.0).log_prob(v.abs() + 0.1)
            + D.Beta(s, s).entropy()
            + D.MultivariateNormal(m, scale_tril=paddle.diag_embed(s)).log_prob(v)
        )

    args = [paddle.to_tensor(np.array(a)) for a in ([0.1, 0.2], [1.0, 2.0], [0.3, -0.4])]
    np.testing.assert_allclose(paddle.jit.to_static(f)(*args).numpy(), f(*args).numpy(), rtol=1e-12)


@pytest.mark.parametrize("method", ["onion", "cvine"])
def test_lkj_samples_are_correlation_factors_with_the_lkj_marginal(method):
    """L L^T has a unit diagonal; an off-diagonal correlation of LKJ(eta) in dim d is
    2 Beta(b, b) - 1 with b = eta - 1 + d/2, so its variance is 1 / (2b + 1)."""
    paddle.seed(8)
    eta, dim, n = 2.0, 3, 40_000
    L = D.LKJCholesky(dim, eta, method).sample([n]).numpy().astype(np.float64)
    assert L.shape == (n, dim, dim) and np.allclose(np.triu(L, 1), 0)
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-6)
    b = eta - 1 + dim / 2
    for i, j in ((1, 0), (2, 0), (2, 1)):
        assert abs(corr[:, i, j].var() - 1 / (2 * b + 1)) < 0.006, (i, j, corr[:, i, j].var())


class _GammaByNaturalParameters(D.ExponentialFamily):
    """A Gamma that declares only what ExponentialFamily needs (carrier measure h(x) = 1)."""

    _mean_carrier_measure = 0.0

    def __init__(self, concentration, rate):
        self.gamma = D.Gamma(concentration, rate)
        super().__init__(self.gamma.batch_shape)

    @property
    def _natural_parameters(self):
        return self.gamma._natural_parameters

    def _log_normalizer(self, x, y):
        return self.gamma._log_normalizer(x, y)


def test_exponential_family_entropy_and_bregman_kl_equal_the_closed_forms():
    a, b = np.array([0.7, 2.0, 5.0]), np.array([1.5, 0.4, 3.0])
    p, q = _GammaByNaturalParameters(a, b), _GammaByNaturalParameters(b, a)
    np.testing.assert_allclose(p.entropy().numpy(), D.Gamma(a, b).entropy().numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        D.kl_divergence(p, q).numpy(), D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)).numpy(), rtol=1e-10
    )
