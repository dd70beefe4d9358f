"""The Gamma family: Gamma, Chi2, Exponential, Beta and Dirichlet.

Gamma draws are NumPy's ``standard_gamma`` on the concentration's values (from the framework's
generator); Beta and Dirichlet normalise independent Gamma draws. ``Gamma.rsample`` is
differentiable in ``rate`` only, as Paddle 3.3.1's is (no implicit gradient in ``concentration``).
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import random as _random
from ..ops._util import constant
from ..ops.shape import stack
from ..ops.special import digamma, lgamma
from ._base import ExponentialFamily, params, positive, value_like


def standard_gamma(concentration: Tensor, shape: tuple) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` (``concentration`` broadcast to it), a constant."""
    alpha = np.broadcast_to(concentration.numpy(), shape)
    return constant(_random.generator().standard_gamma(alpha).astype(concentration.dtype))


class Gamma(ExponentialFamily):
    """``paddle.distribution.Gamma(concentration, rate)``: density ``rate^a x^(a-1) e^(-rate x) / Gamma(a)``."""

    def __init__(self, concentration, rate) -> None:
        self.concentration, self.rate = params((concentration, "Gamma: concentration"), (rate, "Gamma: rate"))
        positive("Gamma: concentration", self.concentration)
        positive("Gamma: rate", self.rate)
        self.dtype = self.concentration.dtype
        super().__init__(tuple(self.concentration.shape))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.rate)
        a = self.concentration
        return a * self.rate.log() + (a - 1) * value.log() - self.rate * value - lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        shape = self._extend_shape(shape)
        return standard_gamma(self.concentration, shape) / self.rate.expand(shape)

    def kl_divergence(self, other: Gamma) -> Tensor:
        a, b = self.concentration, other.concentration
        return (
            b * (self.rate / other.rate).log()
            + lgamma(b)
            - lgamma(a)
            + (a - b) * digamma(a)
            + (other.rate - self.rate) * (a / self.rate)
        )

    @property
    def _natural_parameters(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y) -> Tensor:
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """``paddle.distribution.Chi2(df)``: Gamma(df / 2, 1 / 2)."""

    def __init__(self, df) -> None:
        (self.df,) = params((df, "Chi2: df"))
        positive("Chi2: df", self.df)
        super().__init__(self.df * 0.5, self.df * 0.0 + 0.5)


class Exponential(ExponentialFamily):
    """``paddle.distribution.Exponential(rate)``; ``rsample`` is ``-log(u) / rate``."""

    def __init__(self, rate) -> None:
        (self.rate,) = params((rate, "Exponential: rate"))
        positive("Exponential: rate", self.rate)
        self.dtype = self.rate.dtype
        super().__init__(tuple(self.rate.shape))

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        shape = self._extend_shape(shape)
        e = constant(_random.generator().standard_exponential(shape).astype(self.dtype))
        return e / self.rate

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.rate)
        return self.rate.log() - self.rate * value

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    def cdf(self, value) -> Tensor:
        return 1.0 - (-self.rate * value_like(value, self.rate)).exp()

    def icdf(self, value) -> Tensor:
        return -(-value_like(value, self.rate)).log1p() / self.rate

    def kl_divergence(self, other: Exponential) -> Tensor:
        ratio = other.rate / self.rate
        return ratio - ratio.log() - 1

    @property
    def _natural_parameters(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x) -> Tensor:
        return -(-x).log()


class Dirichlet(ExponentialFamily):
    """``paddle.distribution.Dirichlet(concentration)`` over the simplex of the last axis."""

    def __init__(self, concentration) -> None:
        (self.concentration,) = params((concentration, "Dirichlet: concentration"))
        if self.concentration.ndim < 1 or self.concentration.size == 0:
            raise ShapeError(f"Dirichlet: concentration must be at least 1-D, got shape {self.concentration.shape}")
        positive("Dirichlet: concentration", self.concentration)
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:])

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def sample(self, shape=()) -> Tensor:
        g = standard_gamma(self.concentration, self._extend_shape(shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.concentration)
        c = self.concentration
        return (value.log() * (c - 1.0)).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        c0 = c.sum(-1)
        k = c.shape[-1]
        return lgamma(c).sum(-1) - lgamma(c0) - (k - c0) * digamma(c0) - ((c - 1.0) * digamma(c)).sum(-1)

    def kl_divergence(self, other: Dirichlet) -> Tensor:
        p, q = self.concentration, other.concentration
        return (
            lgamma(p.sum(-1))
            - lgamma(q.sum(-1))
            - (lgamma(p) - lgamma(q)).sum(-1)
            + ((p - q) * (digamma(p) - digamma(p.sum(-1)).unsqueeze(-1))).sum(-1)
        )

    @property
    def _natural_parameters(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x) -> Tensor:
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))


class Beta(ExponentialFamily):
    """``paddle.distribution.Beta(alpha, beta)``: the two-category Dirichlet."""

    def __init__(self, alpha, beta) -> None:
        self.alpha, self.beta = params((alpha, "Beta: alpha"), (beta, "Beta: beta"))
        self._dirichlet = Dirichlet(stack([self.alpha, self.beta], -1))
        super().__init__(self._dirichlet.batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> Tensor:
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total.pow(2) * (total + 1))

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.alpha)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def sample(self, shape=()) -> Tensor:
        return self._dirichlet.sample(shape)[..., 0]

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    def kl_divergence(self, other: Beta) -> Tensor:
        return self._dirichlet.kl_divergence(other._dirichlet)

    @property
    def _natural_parameters(self) -> tuple:
        return (self.alpha, self.beta)

    def _log_normalizer(self, x, y) -> Tensor:
        return lgamma(x) + lgamma(y) - lgamma(x + y)
