"""``paddle.distribution.TransformedDistribution`` (Y = f(X) for a chain of transforms f) and
LogNormal, which Paddle defines as the exp of a Normal."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ._base import Distribution, sum_rightmost
from .independent import Independent
from .normal import Normal
from .transform import TRANSFORMED, ChainTransform, ExpTransform, Transform


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
