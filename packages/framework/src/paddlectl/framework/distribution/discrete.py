"""The discrete families: Bernoulli, Categorical, Multinomial, Geometric, Binomial and Poisson.

Counts are drawn by NumPy's samplers on the parameters' values (framework generator); entropies
and KL divergences without a closed form sum over the support, bounded as Paddle bounds it.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..ops import random as _random
from ..ops._util import constant
from ..ops.activation import sigmoid, softmax, softplus
from ..ops.creation import arange, full_like
from ..ops.elementwise import cast, where
from ..ops.index import take_along_axis
from ..ops.pointwise import nan_to_num
from ..ops.reduce import max as reduce_max
from ..ops.special import lgamma
from ._base import (
    Distribution,
    ExponentialFamily,
    broadcast_all,
    check,
    draw,
    param,
    params,
    sample_shape_of,
    value_like,
)


def _unit(name: str, t: Tensor, low_open: bool = False) -> None:
    check(name, t, (lambda v: (v > 0) & (v <= 1)) if low_open else (lambda v: (v >= 0) & (v <= 1)),
          "in (0, 1]" if low_open else "in [0, 1]")  # fmt: skip


def _draw_from(fn, shape: tuple, *values: Tensor, dtype) -> Tensor:
    """``fn(generator, *arrays)`` on the parameters' values broadcast to ``shape``, as a constant."""
    arrays = [np.broadcast_to(v.numpy(), shape) for v in values]
    return constant(np.asarray(fn(_random.generator(), *arrays)).astype(dtype))


class Bernoulli(ExponentialFamily):
    """``paddle.distribution.Bernoulli(probs)``; probabilities are clipped to [eps, 1 - eps] of
    their dtype, so log_prob stays finite. ``rsample(shape, temperature)`` is Paddle's relaxed
    (Gumbel-softmax) sample in logit space: ``(logit(u) + logits) / temperature``."""

    def __init__(self, probs, name=None) -> None:
        self.name = name or "Bernoulli"
        (probs,) = params((probs, "Bernoulli: probs"))
        _unit("Bernoulli: probs", probs)
        self.dtype = probs.dtype
        eps = float(np.finfo(probs.dtype).eps)
        self.probs = probs.clip(eps, 1 - eps)
        self.logits = self.probs.log() - (-self.probs).log1p()
        super().__init__(tuple(self.probs.shape))

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, shape=()) -> Tensor:
        return _draw_from(lambda g, p: g.random(p.shape) < p, self._extend_shape(shape), self.probs, dtype=self.dtype)

    def rsample(self, shape=(), temperature=1.0) -> Tensor:
        shape = self._extend_shape(shape)
        u = draw(lambda g, s: g.random(s), shape, self.dtype)
        return (u.log() - (-u).log1p() + self.logits.expand(shape)) / temperature

    def cdf(self, value) -> Tensor:
        probs, value = broadcast_all(self.probs, value_like(value, self.probs))
        return where(value < 0, full_like(probs, 0.0), where(value < 1, 1 - probs, full_like(probs, 1.0)))

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.probs)
        logits, value = broadcast_all(self.logits, value)
        return value * logits - softplus(logits)

    def entropy(self) -> Tensor:
        return softplus(self.logits) - self.logits * self.probs

    def kl_divergence(self, other: Bernoulli) -> Tensor:
        a, b = self.logits, other.logits
        pa, qa = sigmoid(a), sigmoid(-a)
        return pa * (softplus(-b) - softplus(-a)) + qa * (softplus(b) - softplus(a))


class Categorical(Distribution):
    """``paddle.distribution.Categorical(logits)``. As in Paddle 3.3.1, ``probs``/``log_prob``
    read ``logits`` as unnormalised probabilities (divided by their sum) while ``sample``,
    ``entropy`` and ``kl_divergence`` read them as log-probabilities (softmax)."""

    def __init__(self, logits, name=None) -> None:
        self.name = name or "Categorical"
        self.logits = param(logits, "Categorical: logits")
        if self.logits.ndim < 1:
            raise ShapeError("Categorical: logits must be at least 1-D (the last axis holds the categories)")
        self.dtype = self.logits.dtype
        self._prob = self.logits / self.logits.sum(-1, keepdim=True)
        super().__init__()

    def sample(self, shape=()) -> Tensor:
        """Category indices of shape ``shape + logits.shape[:-1]``, drawn from ``softmax(logits)``."""
        shape = sample_shape_of(shape)
        p = softmax(self.logits, axis=-1).numpy().astype(np.float64)
        rows, g, n = p.reshape(-1, p.shape[-1]), _random.generator(), int(np.prod(shape, dtype=np.int64))
        draws = np.stack([g.choice(p.shape[-1], size=n, p=row / row.sum()) for row in rows], axis=-1)
        return constant(draws.reshape(shape + p.shape[:-1]).astype(np.int64))

    def _logits_shifted(self, logits: Tensor) -> tuple[Tensor, Tensor]:
        shifted = logits - reduce_max(logits, axis=-1, keepdim=True)
        return shifted, shifted.exp().sum(-1, keepdim=True)

    def entropy(self) -> Tensor:
        logits, z = self._logits_shifted(self.logits)
        prob = logits.exp() / z
        return -(prob * (logits - z.log())).sum(-1)

    def kl_divergence(self, other: Categorical) -> Tensor:
        logits, z = self._logits_shifted(self.logits)
        other_logits, other_z = self._logits_shifted(other.logits)
        prob = logits.exp() / z
        return (prob * (logits - z.log() - other_logits + other_z.log())).sum(-1, keepdim=True)

    def probs(self, value) -> Tensor:
        if not isinstance(value, Tensor) or value.dtype.kind not in "iu":
            raise DTypeError("Categorical: value must be an integer Tensor of category indices")
        if self._prob.ndim == 1:
            return self._prob[value.reshape([-1])].reshape(value.shape)
        if value.ndim == 1:
            return take_along_axis(self._prob, value.reshape([1] * (self._prob.ndim - 1) + [-1]), axis=-1)
        return take_along_axis(self._prob, value, axis=-1)

    def prob(self, value) -> Tensor:
        return self.probs(value)

    def log_prob(self, value) -> Tensor:
        return self.probs(value).log()


class Multinomial(Distribution):
    """``paddle.distribution.Multinomial(total_count, probs)``: counts over the last axis."""

    def __init__(self, total_count, probs) -> None:
        if not isinstance(total_count, int) or isinstance(total_count, bool) or total_count < 1:
            raise ConfigError(f"Multinomial: total_count must be an int >= 1, got {total_count!r}")
        probs = param(probs, "Multinomial: probs")
        if probs.ndim < 1:
            raise ShapeError("Multinomial: probs must be at least 1-D (the last axis holds the categories)")
        check("Multinomial: probs", probs, lambda v: v >= 0, "non-negative")
        self.total_count = total_count
        self.probs = probs / probs.sum(-1, keepdim=True)
        self._categorical = Categorical(probs.log())
        shape = tuple(probs.shape)
        super().__init__(shape[:-1], shape[-1:])

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.probs)
        logits, value = broadcast_all(self.probs.log(), value)
        logits = where((value == 0).logical_and(logits.isinf()), full_like(logits, 0.0), logits)
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (value * logits).sum(-1)

    def sample(self, shape=()) -> Tensor:
        size = self._extend_shape(shape)
        p = np.broadcast_to(self.probs.numpy().astype(np.float64), size)
        counts = _random.generator().multinomial(self.total_count, p / p.sum(-1, keepdims=True))
        return constant(counts.astype(self.probs.dtype))

    def entropy(self) -> Tensor:
        """``n H(categorical) - log n! + E[sum_i log x_i!]``, the expectation over each count's binomial."""
        n = self.total_count
        log_n_factorial = float(np.sum(np.log(np.arange(1, n + 1))))
        support = arange(1, n + 1, dtype=self.probs.dtype).reshape([-1] + [1] * self.probs.ndim)
        logits = self.probs.log() - (-self.probs).log1p()
        log_norm = n * (logits.clip(min=0) + (-logits.abs()).exp().log1p()) - log_n_factorial
        log_binomial = support * logits - lgamma(support + 1) - lgamma(n - support + 1) - log_norm
        expected = (log_binomial.exp() * lgamma(support + 1)).sum([0, -1])
        return n * self._categorical.entropy() - log_n_factorial + expected


class Geometric(Distribution):
    """``paddle.distribution.Geometric(probs)``: failures before the first success, probs in (0, 1]."""

    def __init__(self, probs) -> None:
        (self.probs,) = params((probs, "Geometric: probs"))
        _unit("Geometric: probs", self.probs, low_open=True)
        super().__init__(tuple(self.probs.shape))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def pmf(self, k) -> Tensor:
        return (1.0 - self.probs).pow(value_like(k, self.probs)) * self.probs

    def log_pmf(self, k) -> Tensor:
        return self.pmf(k).log()

    def prob(self, value) -> Tensor:
        return self.pmf(value)

    def log_prob(self, value) -> Tensor:
        return self.log_pmf(value)

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        tiny = float(np.finfo(np.float32).tiny)
        u = draw(lambda g, s: g.uniform(tiny, 1.0, s), self._extend_shape(shape), self.probs.dtype)
        return (u.log() / (-self.probs).log1p()).floor()

    def entropy(self) -> Tensor:
        p = self.probs
        return -((1.0 - p) * (1.0 - p).log() + p * p.log()) / p

    def cdf(self, k) -> Tensor:
        return 1.0 - (1.0 - self.probs).pow(value_like(k, self.probs) + 1)

    def kl_divergence(self, other: Geometric) -> Tensor:
        p, q = self.probs, other.probs
        return p * (p / q).log() + (1.0 - p) * ((1.0 - p) / (1.0 - q)).log()


def _finite_log(x: Tensor) -> Tensor:
    """Paddle's guard on count log-probabilities: -inf becomes -eps of the dtype."""
    return nan_to_num(x, neginf=-float(np.finfo(x.dtype).eps))


class Binomial(Distribution):
    """``paddle.distribution.Binomial(total_count, probs)``."""

    def __init__(self, total_count, probs) -> None:
        self.total_count, self.probs = params((total_count, "Binomial: total_count"), (probs, "Binomial: probs"))
        check("Binomial: total_count", self.total_count, lambda v: (v >= 0) & (v == np.floor(v)), "a count >= 0")
        _unit("Binomial: probs", self.probs)
        self.dtype = self.probs.dtype
        super().__init__(tuple(self.total_count.shape))

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, shape=()) -> Tensor:
        shape = self._extend_shape(shape)
        fn = lambda g, n, p: g.binomial(n.astype(np.int64), p)  # noqa: E731
        return _draw_from(fn, shape, self.total_count, self.probs, dtype=self.dtype)

    def _support(self) -> Tensor:
        top = int(self.total_count.numpy().max())
        return arange(top + 1, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.probs)
        n = self.total_count
        log_comb = lgamma(n + 1.0) - lgamma(n - value + 1.0) - lgamma(value + 1.0)
        eps = float(np.finfo(self.dtype).eps)
        p = self.probs.clip(eps, 1 - eps)
        return _finite_log(log_comb + value * p.log() + (n - value) * (1 - p).log())

    def entropy(self) -> Tensor:
        log_prob = self.log_prob(self._support())
        return -(log_prob.exp() * log_prob).sum(0)

    def kl_divergence(self, other: Binomial) -> Tensor:
        support = self._support()
        log_p, log_q = self.log_prob(support), other.log_prob(support)
        return (log_p.exp() * (log_p - log_q)).sum(0)


class Poisson(Distribution):
    """``paddle.distribution.Poisson(rate)``; entropy and KL sum the support up to
    ``rate + 30 sqrt(rate)``, as Paddle does."""

    def __init__(self, rate) -> None:
        rate = [rate] if isinstance(rate, numbers.Real) else rate  # Paddle: a number is a batch of one
        (self.rate,) = params((rate, "Poisson: rate"))
        check("Poisson: rate", self.rate, lambda v: v >= 0, ">= 0")
        self.dtype = self.rate.dtype
        super().__init__(tuple(self.rate.shape))

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, shape=()) -> Tensor:
        return _draw_from(lambda g, lam: g.poisson(lam), self._extend_shape(shape), self.rate, dtype=self.dtype)

    def _support(self, rate_max: float) -> Tensor:
        spread = np.sqrt(rate_max) if rate_max >= 1 else 1.0
        upper = int(np.max((self.rate.numpy() + 30 * spread).astype(np.int32)))
        return arange(0, upper, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.rate)
        return _finite_log(-self.rate + value * self.rate.log() - lgamma(value + 1))

    def entropy(self) -> Tensor:
        log_prob = self.log_prob(self._support(float(self.rate.numpy().max())))
        proposed = -(log_prob.exp() * log_prob).sum(0)
        return proposed * cast(self.rate != 0, self.dtype)

    def kl_divergence(self, other: Poisson) -> Tensor:
        if self.batch_shape != other.batch_shape:
            raise ShapeError(f"Poisson KL: batch shapes differ, {list(self.batch_shape)} vs {list(other.batch_shape)}")
        rate_max = float(np.maximum(self.rate.numpy(), other.rate.numpy()).max())
        top = int(self._support(rate_max).numpy().max())
        support = arange(0, top, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))
        log_p, log_q = self.log_prob(support), other.log_prob(support)
        return (log_p.exp() * (log_p - log_q)).sum(0)
