"""``paddle.distribution.Independent``: batch dims reinterpreted as event dims."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError
from ._base import Distribution, sum_rightmost


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
