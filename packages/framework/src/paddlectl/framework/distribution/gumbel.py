"""``paddle.distribution.Gumbel``: ``loc - scale log(-log u)`` for u uniform, a TransformedDistribution
of a Uniform as in Paddle (its own closed forms for the densities and moments)."""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..ops.creation import full_like
from ._base import params, positive, value_like
from .normal import Uniform
from .transformed_distribution import TransformedDistribution


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
