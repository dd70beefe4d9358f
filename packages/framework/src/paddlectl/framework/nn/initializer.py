"""``paddle.nn.initializer``: how parameters get their first values (Paddle's formulas and defaults)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..ops import random


def _fans(shape) -> tuple[int, int]:
    """Paddle's fan rule: a 2-D weight is [in, out]; a conv kernel is [out, in, *receptive field]."""
    shape = list(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Called with a parameter; fills its data in place."""

    def __call__(self, param, block=None):
        param._data = self.sample(tuple(param.shape), param.dtype)
        return param

    def sample(self, shape: tuple, dtype) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must define sample(shape, dtype)")


class Constant(Initializer):
    def __init__(self, value: float = 0.0) -> None:
        self.value = value

    def sample(self, shape, dtype):
        return np.full(shape, self.value, dtype=dtype)


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, name=None) -> None:
        self.low, self.high = low, high

    def sample(self, shape, dtype):
        return random.uniform(shape, self.low, self.high, dtype)


class Normal(Initializer):
    def __init__(self, mean: float = 0.0, std: float = 1.0, name=None) -> None:
        self.mean, self.std = mean, std

    def sample(self, shape, dtype):
        return random.normal(shape, self.mean, self.std, dtype)


class TruncatedNormal(Initializer):
    """Normal values cut to [a, b] (absolute bounds; Paddle's defaults -2 and 2)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, name=None) -> None:
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def sample(self, shape, dtype):
        return random.truncated_normal(shape, self.mean, self.std, self.a, self.b, dtype)


class XavierUniform(Initializer):
    def __init__(self, fan_in=None, fan_out=None, gain: float = 1.0, name=None) -> None:
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def sample(self, shape, dtype):
        fi, fo = _fans(shape)
        fi, fo = self.fan_in or fi, self.fan_out or fo
        limit = self.gain * math.sqrt(6.0 / (fi + fo))
        return random.uniform(shape, -limit, limit, dtype)


class XavierNormal(Initializer):
    def __init__(self, fan_in=None, fan_out=None, gain: float = 1.0, name=None) -> None:
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def sample(self, shape, dtype):
        fi, fo = _fans(shape)
        fi, fo = self.fan_in or fi, self.fan_out or fo
        return random.normal(shape, 0.0, self.gain * math.sqrt(2.0 / (fi + fo)), dtype)


def _gain(nonlinearity: str, negative_slope: float) -> float:
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + negative_slope**2))
    return {"relu": math.sqrt(2.0), "tanh": 5.0 / 3, "linear": 1.0, "sigmoid": 1.0, "conv2d": 1.0}.get(
        nonlinearity, 1.0
    )


class KaimingUniform(Initializer):
    def __init__(self, fan_in=None, negative_slope: float = 0.0, nonlinearity: str = "relu", name=None) -> None:
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, negative_slope, nonlinearity

    def sample(self, shape, dtype):
        fi = self.fan_in or _fans(shape)[0]
        limit = _gain(self.nonlinearity, self.negative_slope) * math.sqrt(3.0 / fi)
        return random.uniform(shape, -limit, limit, dtype)


class KaimingNormal(Initializer):
    def __init__(self, fan_in=None, negative_slope: float = 0.0, nonlinearity: str = "relu", name=None) -> None:
        self.fan_in, self.negative_slope, self.nonlinearity = fan_in, negative_slope, nonlinearity

    def sample(self, shape, dtype):
        fi = self.fan_in or _fans(shape)[0]
        std = _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fi)
        return random.normal(shape, 0.0, std, dtype)


class Assign(Initializer):
    """Initialise from a given array (Paddle: ``nn.initializer.Assign``)."""

    def __init__(self, value, name=None) -> None:
        self.value = np.asarray(value.numpy() if hasattr(value, "numpy") else value)

    def sample(self, shape, dtype):
        if self.value.shape != tuple(shape):
            raise ShapeError(f"Assign initializer: value has shape {list(self.value.shape)}, parameter {list(shape)}")
        return self.value.astype(dtype, copy=True)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times ``gain`` over [rows, prod(other dims)] (Paddle: the Q of
    the QR of a standard normal draw, column signs fixed by R's diagonal, transposed when wide)."""

    def __init__(self, gain: float = 1.0, name=None) -> None:
        self.gain = gain

    def sample(self, shape, dtype):
        if len(shape) < 2:
            raise ShapeError(f"Orthogonal initializer: the parameter needs at least 2 dims, got {list(shape)}")
        rows, cols = shape[0], int(np.prod(shape[1:]))
        draw = random.normal((max(rows, cols), min(rows, cols)), 0.0, 1.0, "float32").astype(np.float64)
        q, r = np.linalg.qr(draw)
        q = q * np.sign(np.diagonal(r))
        q = q.T if rows < cols else q
        return (q.reshape(shape) * self.gain).astype(dtype)


def calculate_gain(nonlinearity: str, param=None) -> float:
    return _gain(nonlinearity, 0.01 if param is None else param)
