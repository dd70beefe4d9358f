"""``paddle.nn.initializer``: how parameters get their first values (Paddle's formulas and defaults)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import ConfigError, ShapeError
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


class Dirac(Initializer):
    """An identity convolution: zeros but for a 1 at the kernel centre of output channel ``j`` (in
    each of ``groups`` blocks of outputs) and input channel ``j``, so the conv passes its input
    through (Paddle fills in float32, then casts)."""

    def __init__(self, groups: int = 1, name=None) -> None:
        self.groups = groups

    def sample(self, shape, dtype):
        if len(shape) not in (3, 4, 5) or shape[0] % self.groups:
            raise ShapeError(
                f"Dirac initializer: the parameter must be a 3-D/4-D/5-D conv weight whose first dim divides into "
                f"groups={self.groups}, got {list(shape)}"
            )
        out = np.zeros(shape, np.float32)
        per_group = shape[0] // self.groups
        channels = np.arange(min(per_group, shape[1]))
        centre = tuple(d // 2 for d in shape[2:])
        for g in range(self.groups):
            out[(channels + g * per_group, channels, *centre)] = 1.0
        return out.astype(dtype)


class Bilinear(Initializer):
    """A [C, 1, K, K] transposed-conv kernel that upsamples bilinearly, by Paddle's formula (its
    row coordinate ``(i / K) % K`` is a true division, kept as Paddle computes it)."""

    def sample(self, shape, dtype):
        if len(shape) != 4 or shape[2] != shape[3]:
            raise ShapeError(f"Bilinear initializer: the parameter must be [C, M, K, K], got {list(shape)}")
        size = shape[3]
        f = np.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        i = np.arange(int(np.prod(shape)))
        x, y = i % size, (i / size) % size
        weight = ((1 - np.abs(x / f - c)) * (1 - np.abs(y / f - c))).astype(np.float32)
        return weight.reshape(shape).astype(dtype)


_GLOBAL = {"weight": None, "bias": None}


def set_global_initializer(weight_init, bias_init=None) -> None:
    """Initializers every later parameter takes unless its ParamAttr names one (ahead of a layer's
    own default); ``None`` clears them."""
    for what, value in (("weight_init", weight_init), ("bias_init", bias_init)):
        if value is not None and not isinstance(value, Initializer):
            raise ConfigError(
                f"set_global_initializer: {what} must be a paddle.nn.initializer.Initializer or None, got "
                f"{type(value).__name__}"
            )
    _GLOBAL["weight"], _GLOBAL["bias"] = weight_init, bias_init


def global_initializer(is_bias: bool):
    """The initializer ``set_global_initializer`` set for biases or weights, or None."""
    return _GLOBAL["bias" if is_bias else "weight"]
