"""Paddle's bijections (``paddle.distribution.transform``): forward, inverse, the log-determinant of
the Jacobian and the shape maps, each through ops so log-densities of transformed distributions
differentiate. ``_domain_rank``/``_codomain_rank`` are the event ranks a transform works on."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..ops.activation import log_sigmoid, sigmoid, softplus
from ..ops.creation import arange, zeros
from ..ops.rearrange import unstack
from ..ops.shape import pad, stack
from ._base import Distribution, sum_rightmost

TRANSFORMED: list[type] = []
"""Holds TransformedDistribution, which transformed_distribution.py (importing this module) puts here: calling a
Transform on a Distribution builds one without this module importing that one."""

__all__ = [
    "Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
    "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform",
    "StickBreakingTransform", "TanhTransform",
]  # fmt: skip


def _tensor(name: str, value) -> Tensor:
    if not isinstance(value, Tensor):
        raise DTypeError(f"{name} must be a Tensor, got {type(value).__name__}")
    return value


def _broadcast_shape(*shapes) -> tuple:
    try:
        import numpy as np

        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"shapes do not broadcast: {[list(s) for s in shapes]}") from None


class Transform:
    """A map y = f(x). Call it on a Tensor (forward), a Distribution (a TransformedDistribution) or
    another Transform (``ChainTransform([self, other])``, as Paddle chains them)."""

    _bijective = True
    _domain_rank = 0
    _codomain_rank = 0

    def __call__(self, input):  # noqa: A002 - Paddle's parameter name
        if isinstance(input, Distribution):
            return TRANSFORMED[0](input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    def _check_rank(self, x, rank: int, what: str) -> Tensor:
        x = _tensor(what, x)
        if x.ndim < rank:
            raise ShapeError(f"{type(self).__name__}: {what} needs at least {rank} dims, got shape {x.shape}")
        return x

    def forward(self, x: Tensor) -> Tensor:
        return self._forward(self._check_rank(x, self._domain_rank, "x"))

    def inverse(self, y: Tensor) -> Tensor:
        return self._inverse(self._check_rank(y, self._codomain_rank, "y"))

    def forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        x = self._check_rank(x, self._domain_rank, "x")
        if not self._is_injective():
            raise NotImplementedError(f"{type(self).__name__} is not injective: no log-det-Jacobian")
        return self._forward_log_det_jacobian(x)

    def inverse_log_det_jacobian(self, y: Tensor) -> Tensor:
        y = self._check_rank(y, self._codomain_rank, "y")
        return self._inverse_log_det_jacobian(y)

    def forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if not isinstance(shape, Sequence):
            raise DTypeError(f"shape must be a sequence of ints, got {type(shape).__name__}")
        return self._forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if not isinstance(shape, Sequence):
            raise DTypeError(f"shape must be a sequence of ints, got {type(shape).__name__}")
        return self._inverse_shape(shape)

    def _is_injective(self) -> bool:
        return self._bijective

    def _forward(self, x):
        raise NotImplementedError(f"{type(self).__name__}: forward not implemented")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__}: inverse not implemented")

    def _forward_log_det_jacobian(self, x):
        return -self._inverse_log_det_jacobian(self.forward(x))

    def _inverse_log_det_jacobian(self, y):
        return -self._forward_log_det_jacobian(self._inverse(y))

    def _forward_shape(self, shape):
        return shape

    def _inverse_shape(self, shape):
        return shape


class AbsTransform(Transform):
    """y = |x|; not injective, so its inverse is the pair (-y, y)."""

    _bijective = False

    def _forward(self, x):
        return x.abs()

    def _inverse(self, y):
        return -y, y

    def _inverse_log_det_jacobian(self, y):
        zero = zeros([], dtype=y.dtype)
        return zero, zero


class AffineTransform(Transform):
    """y = loc + scale * x."""

    def __init__(self, loc: Tensor, scale: Tensor) -> None:
        self._loc = _tensor("AffineTransform: loc", loc)
        self._scale = _tensor("AffineTransform: scale", scale)

    @property
    def loc(self) -> Tensor:
        return self._loc

    @property
    def scale(self) -> Tensor:
        return self._scale

    def _forward(self, x):
        return self._loc + self._scale * x

    def _inverse(self, y):
        return (y - self._loc) / self._scale

    def _forward_log_det_jacobian(self, x):
        return self._scale.abs().log()

    def _forward_shape(self, shape):
        return _broadcast_shape(shape, self._loc.shape, self._scale.shape)

    _inverse_shape = _forward_shape


class ExpTransform(Transform):
    """y = exp(x)."""

    def _forward(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def _forward_log_det_jacobian(self, x):
        return x


class PowerTransform(Transform):
    """y = x ** power."""

    def __init__(self, power: Tensor) -> None:
        self._power = _tensor("PowerTransform: power", power)

    @property
    def power(self) -> Tensor:
        return self._power

    def _forward(self, x):
        return x.pow(self._power)

    def _inverse(self, y):
        return y.pow(1 / self._power)

    def _forward_log_det_jacobian(self, x):
        return (self._power * x.pow(self._power - 1)).abs().log()

    def _forward_shape(self, shape):
        return _broadcast_shape(shape, self._power.shape)

    _inverse_shape = _forward_shape


class SigmoidTransform(Transform):
    """y = sigmoid(x)."""

    def _forward(self, x):
        return sigmoid(x)

    def _inverse(self, y):
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x):
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); the log-det uses ``2 (log 2 - x - softplus(-2x))``, stable for large |x|."""

    def _forward(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def _forward_log_det_jacobian(self, x):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last axis; not injective (log is its right inverse)."""

    _bijective = False
    _domain_rank = 1
    _codomain_rank = 1

    def _forward(self, x):
        x = (x - x.max(-1, keepdim=True)).exp()
        return x / x.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def _forward_shape(self, shape):
        if len(shape) < 1:
            raise ShapeError("SoftmaxTransform: shape needs at least one dim")
        return shape

    _inverse_shape = _forward_shape


class StickBreakingTransform(Transform):
    """R^(K-1) onto the K-simplex by stick breaking."""

    _domain_rank = 1
    _codomain_rank = 1

    def _offset(self, k: int, dtype) -> Tensor:
        return (k - arange(k, dtype=dtype)).log()

    def _forward(self, x):
        z = sigmoid(x - self._offset(x.shape[-1], x.dtype))
        rest = (1 - z).cumprod(-1)
        lead = [0, 0] * (x.ndim - 1)
        return pad(z, lead + [0, 1], value=1.0) * pad(rest, lead + [1, 0], value=1.0)

    def _inverse(self, y):
        crop = y[..., :-1]
        return crop.log() - (1 - crop.cumsum(-1)).log() + self._offset(crop.shape[-1], y.dtype)

    def _forward_log_det_jacobian(self, x):
        y = self.forward(x)
        x = x - self._offset(x.shape[-1], x.dtype)
        return (-x + log_sigmoid(x) + y[..., :-1].log()).sum(-1)

    def _forward_shape(self, shape):
        if not shape:
            raise ShapeError("StickBreakingTransform: shape must not be empty")
        return (*shape[:-1], shape[-1] + 1)

    def _inverse_shape(self, shape):
        if not shape:
            raise ShapeError("StickBreakingTransform: shape must not be empty")
        return (*shape[:-1], shape[-1] - 1)


class ReshapeTransform(Transform):
    """Reshapes the event: ``in_event_shape`` to ``out_event_shape`` (same number of elements)."""

    def __init__(self, in_event_shape: Sequence[int], out_event_shape: Sequence[int]) -> None:
        if not isinstance(in_event_shape, Sequence) or not isinstance(out_event_shape, Sequence):
            raise DTypeError("ReshapeTransform: in_event_shape and out_event_shape must be sequences of ints")
        if math.prod(in_event_shape) != math.prod(out_event_shape):
            raise ShapeError(f"ReshapeTransform: {list(in_event_shape)} and {list(out_event_shape)} differ in size")
        self._in_event_shape, self._out_event_shape = tuple(in_event_shape), tuple(out_event_shape)

    @property
    def in_event_shape(self) -> tuple:
        return self._in_event_shape

    @property
    def out_event_shape(self) -> tuple:
        return self._out_event_shape

    @property
    def _domain_rank(self) -> int:
        return len(self._in_event_shape)

    @property
    def _codomain_rank(self) -> int:
        return len(self._out_event_shape)

    def _forward(self, x):
        return x.reshape(list(x.shape[: x.ndim - len(self._in_event_shape)]) + list(self._out_event_shape))

    def _inverse(self, y):
        return y.reshape(list(y.shape[: y.ndim - len(self._out_event_shape)]) + list(self._in_event_shape))

    def _map_shape(self, shape, src: tuple, dst: tuple):
        if len(shape) < len(src) or tuple(shape[len(shape) - len(src) :]) != src:
            raise ShapeError(f"ReshapeTransform: shape {list(shape)} does not end in the event shape {list(src)}")
        return tuple(shape[: len(shape) - len(src)]) + dst

    def _forward_shape(self, shape):
        return self._map_shape(shape, self._in_event_shape, self._out_event_shape)

    def _inverse_shape(self, shape):
        return self._map_shape(shape, self._out_event_shape, self._in_event_shape)

    def _forward_log_det_jacobian(self, x):
        return zeros(x.shape[: x.ndim - len(self._in_event_shape)], dtype=x.dtype)


class ChainTransform(Transform):
    """The composition of ``transforms``, applied first to last."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        if not isinstance(transforms, Sequence) or not all(isinstance(t, Transform) for t in transforms):
            raise DTypeError("ChainTransform: transforms must be a sequence of Transform")
        self.transforms = list(transforms)

    def _is_injective(self) -> bool:
        return all(t._is_injective() for t in self.transforms)

    @property
    def _domain_rank(self) -> int:
        if not self.transforms:
            return 0
        rank = self.transforms[-1]._codomain_rank
        for t in reversed(self.transforms):
            rank = max(rank - (t._codomain_rank - t._domain_rank), t._domain_rank)
        return rank

    @property
    def _codomain_rank(self) -> int:
        if not self.transforms:
            return 0
        rank = self.transforms[0]._domain_rank
        for t in self.transforms:
            rank = max(rank + t._codomain_rank - t._domain_rank, t._codomain_rank)
        return rank

    def _forward(self, x):
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y):
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x):
        value, rank = 0.0, self._domain_rank
        for t in self.transforms:
            value = value + sum_rightmost(t.forward_log_det_jacobian(x), rank - t._domain_rank)
            x = t.forward(x)
            rank += t._codomain_rank - t._domain_rank
        return value

    def _forward_shape(self, shape):
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return shape

    def _inverse_shape(self, shape):
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return shape


class IndependentTransform(Transform):
    """``base`` with its rightmost ``reinterpreted_batch_rank`` batch dims read as event dims."""

    def __init__(self, base: Transform, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Transform):
            raise DTypeError(f"IndependentTransform: base must be a Transform, got {type(base).__name__}")
        if not isinstance(reinterpreted_batch_rank, int) or reinterpreted_batch_rank <= 0:
            raise ConfigError(
                f"IndependentTransform: reinterpreted_batch_rank must be an int > 0, got {reinterpreted_batch_rank!r}"
            )
        self._base, self._rank = base, reinterpreted_batch_rank

    def _is_injective(self) -> bool:
        return self._base._is_injective()

    @property
    def _domain_rank(self) -> int:
        return self._base._domain_rank + self._rank

    @property
    def _codomain_rank(self) -> int:
        return self._base._codomain_rank + self._rank

    def _forward(self, x):
        return self._base.forward(x)

    def _inverse(self, y):
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x):
        return self._base.forward_log_det_jacobian(x).sum(list(range(-self._rank, 0)))

    def _forward_shape(self, shape):
        return self._base.forward_shape(shape)

    def _inverse_shape(self, shape):
        return self._base.inverse_shape(shape)


class StackTransform(Transform):
    """``transforms[i]`` on slice i of ``axis``."""

    def __init__(self, transforms: Sequence[Transform], axis: int = 0) -> None:
        if (
            not transforms
            or not isinstance(transforms, Sequence)
            or not all(isinstance(t, Transform) for t in transforms)
        ):
            raise DTypeError("StackTransform: transforms must be a non-empty sequence of Transform")
        if not isinstance(axis, int):
            raise DTypeError(f"StackTransform: axis must be an int, got {type(axis).__name__}")
        self._transforms, self._axis = list(transforms), axis

    @property
    def transforms(self) -> list:
        return self._transforms

    @property
    def axis(self) -> int:
        return self._axis

    def _is_injective(self) -> bool:
        return all(t._is_injective() for t in self._transforms)

    def _apply(self, method: str, v: Tensor) -> Tensor:
        if not -v.ndim <= self._axis < v.ndim or v.shape[self._axis] != len(self._transforms):
            raise ShapeError(
                f"StackTransform: axis {self._axis} of shape {v.shape} must hold {len(self._transforms)} slices"
            )
        parts = unstack(v, self._axis)
        return stack([getattr(t, method)(p) for p, t in zip(parts, self._transforms, strict=True)], self._axis)

    def _forward(self, x):
        return self._apply("forward", x)

    def _inverse(self, y):
        return self._apply("inverse", y)

    def _forward_log_det_jacobian(self, x):
        return self._apply("forward_log_det_jacobian", x)
