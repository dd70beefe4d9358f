"""Location-scale families beside Normal: Laplace, Cauchy and StudentT, and ContinuousBernoulli."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, ShapeError
from ..ops.creation import full_like
from ..ops.elementwise import where
from ..ops.pointwise import nan_to_num
from ..ops.special import digamma, lgamma
from ._base import Distribution, check, draw, params, positive, value_like
from .gamma import Chi2


class _LocScale(Distribution):
    """Shared constructor: ``loc`` and ``scale`` (> 0) broadcast together."""

    def __init__(self, loc, scale, name=None) -> None:
        family = type(self).__name__
        self.name = name or family
        self.loc, self.scale = params((loc, f"{family}: loc"), (scale, f"{family}: scale"))
        positive(f"{family}: scale", self.scale)
        self.dtype = self.loc.dtype
        super().__init__(tuple(self.loc.shape))

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def _standard(self, value) -> Tensor:
        return (value_like(value, self.loc) - self.loc) / self.scale


class Laplace(_LocScale):
    """``paddle.distribution.Laplace(loc, scale)``; ``rsample`` inverts the CDF of a uniform draw."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2.0) * self.scale

    @property
    def variance(self) -> Tensor:
        return 2.0 * self.scale.pow(2)

    def log_prob(self, value) -> Tensor:
        return -(2 * self.scale).log() - self._standard(value).abs()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()

    def cdf(self, value) -> Tensor:
        z = self._standard(value)
        return 0.5 - 0.5 * z.sign() * (-z.abs()).expm1()

    def icdf(self, value) -> Tensor:
        term = value_like(value, self.loc) - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def rsample(self, shape=()) -> Tensor:
        eps = float(np.finfo(self.dtype).eps)
        u = draw(lambda g, s: g.uniform(-1 + eps / 2, 1 - eps / 2, s), self._extend_shape(shape), self.dtype)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def kl_divergence(self, other: Laplace) -> Tensor:
        t = (self.loc - other.loc).abs()
        return (self.scale * (-t / self.scale).exp() + t) / other.scale + (other.scale / self.scale).log() - 1


class Cauchy(_LocScale):
    """``paddle.distribution.Cauchy(loc, scale)``: no mean or variance (a ValueError says so)."""

    @property
    def mean(self) -> Tensor:
        raise ConfigError("Cauchy distribution has no mean")

    @property
    def variance(self) -> Tensor:
        raise ConfigError("Cauchy distribution has no variance")

    @property
    def stddev(self) -> Tensor:
        raise ConfigError("Cauchy distribution has no stddev")

    def sample(self, shape=(), name=None) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=(), name=None) -> Tensor:
        shape = self._extend_shape(shape)
        u = draw(lambda g, s: g.random(s), shape, self.dtype)
        return self.loc.expand(shape) + self.scale.expand(shape) * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value) -> Tensor:
        return -self._standard(value).square().log1p() - (math.log(math.pi) + self.scale.log())

    def cdf(self, value) -> Tensor:
        return self._standard(value).atan() / math.pi + 0.5

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()

    def kl_divergence(self, other: Cauchy) -> Tensor:
        t1 = ((self.scale + other.scale).pow(2) + (self.loc - other.loc).pow(2)).log()
        return t1 - (4 * self.scale * other.scale).log()


class StudentT(Distribution):
    """``paddle.distribution.StudentT(df, loc, scale)``; a sample is ``loc + scale z / sqrt(chi2 / df)``."""

    def __init__(self, df, loc, scale, name=None) -> None:
        self.name = name or "StudentT"
        self.df, self.loc, self.scale = params((df, "StudentT: df"), (loc, "StudentT: loc"), (scale, "StudentT: scale"))
        positive("StudentT: df", self.df)
        positive("StudentT: scale", self.scale)
        self.dtype = self.df.dtype
        super().__init__(tuple(self.df.shape))
        self._chi2 = Chi2(self.df)

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1.0, self.loc, full_like(self.loc, float("nan")))

    @property
    def variance(self) -> Tensor:
        """Differentiable in df too (Paddle 3.3.1 detaches df here, so its df-gradient is 0)."""
        df = self.df
        safe = where(df > 2.0, df, full_like(df, 3.0))  # no 0 denominator in the unused branch's gradient
        finite = where(df > 2.0, self.scale.pow(2) * safe / (safe - 2), full_like(df, float("nan")))
        return where((df <= 2.0).logical_and(df > 1.0), full_like(df, float("inf")), finite)

    def sample(self, shape=()) -> Tensor:
        z = draw(lambda g, s: g.standard_normal(s), self._extend_shape(shape), self.dtype)
        chi2 = self._chi2.sample(shape)
        return (self.loc + self.scale * z * (chi2 / self.df).rsqrt()).detach()

    def log_prob(self, value) -> Tensor:
        y = (value_like(value, self.df) - self.loc) / self.scale
        half = 0.5 * self.df
        z = self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(half) - lgamma(half + 0.5)
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        half = 0.5 * self.df
        lbeta = lgamma(half) + math.lgamma(0.5) - lgamma(half + 0.5)
        return (
            self.scale.log() + 0.5 * (self.df + 1) * (digamma(half + 0.5) - digamma(half)) + 0.5 * self.df.log() + lbeta
        )


class ContinuousBernoulli(Distribution):
    """``paddle.distribution.ContinuousBernoulli(probs, lims)`` on [0, 1]; near probs = 0.5 (inside
    ``lims``) the normaliser, mean and variance use their Taylor expansions, as Paddle's do."""

    def __init__(self, probs, lims=(0.499, 0.501)) -> None:
        probs = [probs] if isinstance(probs, numbers.Real) else probs  # Paddle: a number is a batch of one
        (probs,) = params((probs, "ContinuousBernoulli: probs"))
        check("ContinuousBernoulli: probs", probs, lambda v: (v >= 0) & (v <= 1), "in [0, 1]")
        if len(lims) != 2 or not lims[0] < lims[1]:
            raise ConfigError(f"ContinuousBernoulli: lims must be (low, high) with low < high, got {lims!r}")
        self.dtype = probs.dtype
        eps = float(np.finfo(self.dtype).eps)
        self.probs = probs.clip(eps, 1 - eps)
        self.lims = tuple(float(v) for v in lims)
        super().__init__(tuple(self.probs.shape))

    def _outside(self) -> Tensor:
        return (self.probs <= self.lims[0]).logical_or(self.probs > self.lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside(), self.probs, full_like(self.probs, self.lims[0]))

    def _log_constant(self) -> Tensor:
        p = self._cut_probs()
        below = where(p <= 0.5, p, full_like(p, 0.0))
        above = where(p >= 0.5, p, full_like(p, 1.0))
        q = 1.0 - 2.0 * p
        atanh2 = (q.log1p() - (-q).log1p()).abs()  # 2 |atanh(1 - 2p)|
        proposed = atanh2.log() - where(p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside(), proposed, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        q = 1.0 - 2.0 * p
        proposed = p / (2.0 * p - 1.0) + 1.0 / (q.log1p() - (-q).log1p())
        x = self.probs - 0.5
        return where(self._outside(), proposed, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x)

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        proposed = p * (p - 1.0) / (1.0 - 2.0 * p).square() + 1.0 / ((-p).log1p() - p.log()).square()
        x = (self.probs - 0.5).square()
        return where(self._outside(), proposed, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        return self.icdf(draw(lambda g, s: g.random(s), self._extend_shape(shape), self.dtype))

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.probs)
        eps = float(np.finfo(self.dtype).eps)
        cross = nan_to_num(value * self.probs.log() + (1.0 - value) * (1 - self.probs).log(), neginf=-eps)
        return self._log_constant() + cross

    def entropy(self) -> Tensor:
        log_p, log_q = self.probs.log(), (-self.probs).log1p()
        h = -self._log_constant() + self.mean * (log_q - log_p) - log_q
        return where(self.probs == 0.5, full_like(self.probs, 0.0), h)

    def cdf(self, value) -> Tensor:
        value = value_like(value, self.probs)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inner = where(self._outside(), cdfs, value)
        return where(value <= 0.0, full_like(inner, 0.0), where(value >= 1.0, full_like(inner, 1.0), inner))

    def icdf(self, value) -> Tensor:
        value = value_like(value, self.probs)
        p = self._cut_probs()
        inner = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return where(self._outside(), inner, value)

    def kl_divergence(self, other: ContinuousBernoulli) -> Tensor:
        if self.batch_shape != other.batch_shape:
            raise ShapeError(f"ContinuousBernoulli KL: batch shapes differ, {self.batch_shape} vs {other.batch_shape}")
        log_q, log_1q = other.probs.log(), (-other.probs).log1p()
        return -self.entropy() - (other._log_constant() + self.mean * (log_q - log_1q) + log_1q)
