"""The Distribution base class and what every family shares: turning parameters into tensors,
checking them, sample shapes and the draws themselves.

Draws come from the framework's generator (``paddle.seed`` repeats them): NumPy's ``Generator``
methods run on the parameters' values and the result is a constant tensor, as ``paddle.multinomial``
does. So ``sample`` is never differentiable, and ``rsample`` is: it moves a parameter-free draw
(standard normal, uniform, ...) through ops on the parameters (reparameterisation). A traced
program keeps the draw it was traced with, as the framework's creation samplers do.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence

import numpy as np

from ..core.autograd import grad
from ..core.dtype import convert_dtype
from ..core.state import STATE
from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..ops import random as _random
from ..ops._util import constant
from ..ops.elementwise import cast
from ..ops.rearrange import broadcast_tensors

Draw = Callable[[np.random.Generator, tuple], np.ndarray]


class Distribution:
    """``paddle.distribution.Distribution``: a batch of independent distributions, each over events
    of ``event_shape``. ``prob`` is ``exp(log_prob)``; the rest is each family's."""

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = ()) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)

    @property
    def batch_shape(self) -> tuple:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no mean")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no variance")

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not sample")

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sample; use sample")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no closed-form entropy")

    def kl_divergence(self, other: Distribution) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no closed-form KL divergence")

    def log_prob(self, value) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no log_prob")

    def prob(self, value) -> Tensor:
        return self.log_prob(value).exp()

    def probs(self, value) -> Tensor:
        """Paddle's older name for ``prob``."""
        return self.prob(value)

    def _extend_shape(self, sample_shape: Sequence[int]) -> tuple:
        return sample_shape_of(sample_shape) + self._batch_shape + self._event_shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={list(self._batch_shape)}, event_shape={list(self._event_shape)})"


class ExponentialFamily(Distribution):
    """``paddle.distribution.ExponentialFamily``: entropy from the log-normalizer's gradient (the
    Bregman identity) for families that declare ``_natural_parameters`` and ``_log_normalizer``
    but no entropy of their own."""

    @property
    def _natural_parameters(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} declares no natural parameters")

    def _log_normalizer(self, *natural) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} declares no log-normalizer")

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError(f"{type(self).__name__} declares no mean carrier measure")

    def entropy(self) -> Tensor:
        natural = [p.detach() for p in self._natural_parameters]
        for p in natural:
            p.stop_gradient = False
        log_norm = self._log_normalizer(*natural)
        grads = grad(log_norm.sum(), natural, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(natural, grads, strict=True):
            result = result - p * g
        return result


def sample_shape_of(shape) -> tuple:
    """A sample shape as a tuple of non-negative ints; a typed error names what was given."""
    if isinstance(shape, Tensor):
        shape = shape.numpy().tolist()
    if isinstance(shape, numbers.Integral) or not isinstance(shape, Sequence | np.ndarray):
        raise DTypeError(f"sample shape must be a sequence of ints such as [2, 3], got {shape!r}")
    dims = tuple(shape)
    if not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ConfigError(f"sample shape must hold non-negative ints, got {list(dims)}")
    return tuple(int(d) for d in dims)


def param(value, name: str, dtype=None) -> Tensor:
    """A distribution parameter as a tensor: a Tensor stays itself (its gradient flows); a Python
    number, list or array becomes a constant of ``dtype``, else the default float dtype (a float
    NumPy array keeps its dtype, as Paddle's do)."""
    if isinstance(value, Tensor):
        if value.dtype.kind not in "fiub":
            raise DTypeError(f"{name} must be a real tensor, got dtype {value.dtype}")
        return value if value.dtype.kind == "f" else cast(value, dtype or convert_dtype(None))
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Sequence | np.ndarray):
        raise DTypeError(f"{name} must be a float, a list, a numpy array or a Tensor, got {type(value).__name__}")
    try:
        array = np.asarray(value)
    except ValueError as exc:
        raise ShapeError(f"{name} is a ragged list: {exc}") from None
    if array.dtype.kind not in "fiu":
        raise DTypeError(f"{name} must hold real numbers, got dtype {array.dtype}")
    if dtype is None:
        keep = isinstance(value, np.ndarray) and array.dtype in (np.float32, np.float64)
        dtype = array.dtype if keep else convert_dtype(None)
    return constant(array.astype(dtype))


def params(*named, dtype=None) -> list[Tensor]:
    """Several parameters, broadcast together in one float dtype (the first float tensor's, else
    float64 if any array is float64, else the default)."""
    tensors = [param(v, n, dtype) for v, n in named]
    given = (t.dtype for (v, _), t in zip(named, tensors, strict=True) if isinstance(v, Tensor) and v.dtype.kind == "f")
    target = next(given, None)
    target = target or np.result_type(*[t.dtype for t in tensors])
    tensors = [t if t.dtype == target else cast(t, target) for t in tensors]
    try:
        return broadcast_tensors(tensors)
    except ValueError:
        shapes = ", ".join(f"{n} {list(t.shape)}" for (_, n), t in zip(named, tensors, strict=True))
        raise ShapeError(f"parameter shapes do not broadcast: {shapes}") from None


def value_like(value, like: Tensor) -> Tensor:
    """A ``log_prob``/``cdf`` argument as a tensor in the parameters' dtype."""
    if isinstance(value, Tensor):
        return value if value.dtype == like.dtype else cast(value, like.dtype)
    return param(value, "value", like.dtype)


def concrete(t: Tensor) -> np.ndarray | None:
    """The values behind ``t`` when they exist (eager), None while tracing: checks on parameter
    values run only where there are values."""
    return None if STATE.tracer is not None else t.numpy()


def check(name: str, t: Tensor, ok: Callable[[np.ndarray], np.ndarray], requirement: str) -> None:
    """Raise a ConfigError naming ``name`` when some value of ``t`` fails ``requirement``."""
    values = concrete(t)
    if values is not None and not np.all(ok(values)):
        bad = values[~ok(values)] if values.ndim else values
        raise ConfigError(f"{name} must be {requirement}; got {np.ravel(bad)[:4].tolist()}")


def positive(name: str, t: Tensor) -> None:
    check(name, t, lambda v: v > 0, "> 0")


def draw(fn: Draw, shape: tuple, dtype) -> Tensor:
    """A parameter-free draw of ``shape`` from the framework's generator, as a constant tensor."""
    return constant(np.asarray(fn(_random.generator(), shape)).astype(dtype))


def sum_rightmost(value: Tensor, n: int) -> Tensor:
    return value.sum(list(range(-n, 0))) if n > 0 else value


def broadcast_all(*tensors: Tensor) -> list[Tensor]:
    return broadcast_tensors(list(tensors))
