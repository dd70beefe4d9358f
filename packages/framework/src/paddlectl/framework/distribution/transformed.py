"""Distributions built from others: Independent, TransformedDistribution, and the two Paddle
defines that way, LogNormal (exp of a Normal) and Gumbel (a double-log transform of a Uniform)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..ops.creation import full_like
from ._base import Distribution, params, positive, sum_rightmost, value_like
from .normal import Normal, Uniform
from .transform import TRANSFORMED, ChainTransform, ExpTransform, Transform


class Independent(Distribution):
    """``paddle.distribution.Independent(base, reinterpreted_batch_rank)``: the rightmost batch dims
    of ``base`` become event dims (log_prob and entropy sum over them)."""

    def __init__(self, base: Distribution, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Distribution):
            raise DTypeError(f"Independent: base must be a Distribution, got {type(base).__name__}")
        if not isinstance(reinterpreted_batch_rank, int) or not 0 < reinterpreted_batch_rank <= len(base.batch_shape):
            raise ConfigError(
                f"Independent: reinterpreted_batch_rank must be in (0, {len(base.batch_shape)}], got {reinterpreted_batch_rank!r}"
            )
        self._base, self._rank = base, reinterpreted_batch_rank
        shape = base.batch_shape + base.event_shape
        cut = len(base.batch_shape) - reinterpreted_batch_rank
        super().__init__(shape[:cut], shape[cut:])

    @property
    def mean(self) -> Tensor:
        return self._base.mean

    @property
    def variance(self) -> Tensor:
        return self._base.variance

    def sample(self, shape=()) -> Tensor:
        return self._base.sample(shape)

    def rsample(self, shape=()) -> Tensor:
        return self._base.rsample(shape)

    def log_prob(self, value) -> Tensor:
        return sum_rightmost(self._base.log_prob(value), self._rank)

    def entropy(self) -> Tensor:
        return sum_rightmost(self._base.entropy(), self._rank)


class TransformedDistribution(Distribution):
    """``paddle.distribution.TransformedDistribution(base, transforms)``: Y = chain(X); log_prob by
    the change of variables, sample/rsample by pushing the base's draws through."""

    def __init__(self, base: Distribution, transforms: Sequence[Transform]) -> None:
        if not isinstance(base, Distribution):
            raise DTypeError(f"TransformedDistribution: base must be a Distribution, got {type(base).__name__}")
        if not isinstance(transforms, Sequence) or not all(isinstance(t, Transform) for t in transforms):
            raise DTypeError("TransformedDistribution: transforms must be a sequence of Transform")
        self._base, self._transforms = base, list(transforms)
        if not transforms:
            super().__init__(base.batch_shape, base.event_shape)
            return
        chain = ChainTransform(transforms)
        base_shape = base.batch_shape + base.event_shape
        if len(base_shape) < chain._domain_rank:
            raise ShapeError(
                f"TransformedDistribution: base needs at least {chain._domain_rank} dims, got {len(base_shape)}"
            )
        if chain._domain_rank > len(base.event_shape):
            base = Independent(base, chain._domain_rank - len(base.event_shape))
        shape = tuple(chain.forward_shape(base.batch_shape + base.event_shape))
        event_rank = chain._codomain_rank + max(len(base.event_shape) - chain._domain_rank, 0)
        super().__init__(shape[: len(shape) - event_rank], shape[len(shape) - event_rank :])

    @property
    def base(self) -> Distribution:
        return self._base

    @property
    def transforms(self) -> list:
        return self._transforms

    def sample(self, shape=()) -> Tensor:
        x = self._base.sample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape=()) -> Tensor:
        x = self._base.rsample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            raise DTypeError(f"{type(self).__name__}.log_prob: value must be a Tensor, got {type(value).__name__}")
        log_prob, y, rank = 0.0, value, len(self.event_shape)
        for t in reversed(self._transforms):
            x = t.inverse(y)
            rank += t._domain_rank - t._codomain_rank
            log_prob = log_prob - sum_rightmost(t.forward_log_det_jacobian(x), rank - t._domain_rank)
            y = x
        return log_prob + sum_rightmost(self._base.log_prob(y), rank - len(self._base.event_shape))


TRANSFORMED.append(TransformedDistribution)


class LogNormal(TransformedDistribution):
    """``paddle.distribution.LogNormal(loc, scale)``: exp of Normal(loc, scale)."""

    def __init__(self, loc, scale) -> None:
        self._normal = Normal(loc, scale)
        self.loc, self.scale = self._normal.loc, self._normal.scale
        super().__init__(self._normal, [ExpTransform()])

    @property
    def mean(self) -> Tensor:
        return (self.loc + self._normal.variance / 2).exp()

    @property
    def variance(self) -> Tensor:
        var = self._normal.variance
        return var.expm1() * (2 * self.loc + var).exp()

    def entropy(self) -> Tensor:
        return self._normal.entropy() + self.loc

    def kl_divergence(self, other: LogNormal) -> Tensor:
        return self._normal.kl_divergence(other._normal)


class Gumbel(TransformedDistribution):
    """``paddle.distribution.Gumbel(loc, scale)``: ``loc - scale log(-log u)`` for u uniform."""

    def __init__(self, loc, scale) -> None:
        self.loc, self.scale = params((loc, "Gumbel: loc"), (scale, "Gumbel: scale"))
        positive("Gumbel: scale", self.scale)
        finfo = np.finfo(np.float32)
        low, high = full_like(self.loc, float(finfo.tiny)), full_like(self.loc, float(1 - finfo.eps))
        super().__init__(Uniform(low, high), [])

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * float(np.euler_gamma)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (math.pi**2 / 6)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def prob(self, value) -> Tensor:
        return self.log_prob(value).exp()

    def log_prob(self, value) -> Tensor:
        y = (self.loc - value_like(value, self.loc)) / self.scale
        return y - y.exp() - self.scale.log()

    def cdf(self, value) -> Tensor:
        return (-(-(value_like(value, self.loc) - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + 1 + float(np.euler_gamma)

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        u = self._base.sample(shape)
        return self.loc - self.scale * (-u.log()).log()
