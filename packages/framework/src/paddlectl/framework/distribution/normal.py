"""Normal and Uniform: the two families Paddle builds its other samplers on."""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..ops.creation import full_like
from ..ops.elementwise import cast, where
from ._base import Distribution, check, draw, params, positive, value_like


class Normal(Distribution):
    """``paddle.distribution.Normal(loc, scale)``: Gaussian with mean ``loc`` and standard deviation
    ``scale`` (> 0); ``rsample`` is ``loc + scale * eps``."""

    def __init__(self, loc, scale, name=None) -> None:
        self.name = name or "Normal"
        self.loc, self.scale = params((loc, "Normal: loc"), (scale, "Normal: scale"))
        positive("Normal: scale", self.scale)
        self.dtype = self.loc.dtype
        super().__init__(tuple(self.loc.shape))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def sample(self, shape=(), seed=0) -> Tensor:
        """Draws of shape ``shape + batch_shape`` (no gradient); ``seed`` is accepted for Paddle's
        signature, the framework's generator (``paddle.seed``) decides the draw."""
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        eps = draw(lambda g, s: g.standard_normal(s), self._extend_shape(shape), self.dtype)
        return self.loc + eps * self.scale

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.loc)
        var = self.scale * self.scale
        return -((value - self.loc) * (value - self.loc)) / (2.0 * var) - (
            self.scale.log() + 0.5 * math.log(2 * math.pi)
        )

    def cdf(self, value) -> Tensor:
        value = value_like(value, self.loc)
        return 0.5 * (1.0 + ((value - self.loc) / (self.scale * math.sqrt(2.0))).erf())

    def kl_divergence(self, other: Normal) -> Tensor:
        var_ratio = (self.scale / other.scale).pow(2)
        t1 = ((self.loc - other.loc) / other.scale).pow(2)
        return 0.5 * var_ratio + 0.5 * (t1 - 1.0 - var_ratio.log())


class Uniform(Distribution):
    """``paddle.distribution.Uniform(low, high)`` on ``[low, high)``; ``log_prob`` is -inf outside
    (Paddle's strict ``low < value < high``)."""

    def __init__(self, low, high, name=None) -> None:
        self.name = name or "Uniform"
        self.low, self.high = params((low, "Uniform: low"), (high, "Uniform: high"))
        check("Uniform: high", self.high - self.low, lambda v: v > 0, "greater than low")
        self.dtype = self.low.dtype
        super().__init__(tuple(self.low.shape))

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def sample(self, shape=(), seed=0) -> Tensor:
        """Draws of shape ``shape + batch_shape``; ``seed`` as in ``Normal.sample``."""
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        u = draw(lambda g, s: g.random(s), self._extend_shape(shape), self.dtype)
        return self.low + u * (self.high - self.low)

    def _inside(self, value: Tensor) -> Tensor:
        return cast((self.low < value).logical_and(value < self.high), value.dtype)

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.low)
        with np.errstate(divide="ignore"):  # log(0) = -inf outside the support, as intended
            return self._inside(value).log() - (self.high - self.low).log()

    def prob(self, value) -> Tensor:
        value = value_like(value, self.low)
        return self._inside(value) / (self.high - self.low)

    def cdf(self, value) -> Tensor:
        value = value_like(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clip(0.0, 1.0)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def kl_divergence(self, other: Uniform) -> Tensor:
        """log of the width ratio where ``self``'s support lies inside ``other``'s, else inf (Paddle
        3.3.1 raises NotImplementedError here: the closed form is standard)."""
        inside = (other.low <= self.low).logical_and(self.high <= other.high)
        ratio = ((other.high - other.low) / (self.high - self.low)).log()
        return where(inside, ratio, full_like(ratio, np.inf))
