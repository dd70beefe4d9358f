"""Activation layers: thin Layer wrappers over ``ops.activation`` with
Paddle's constructors and reprs."""

from __future__ import annotations

from ...errors import ShapeError
from ...ops import activation as A
from ...ops.rrelu import rrelu
from .. import initializer as init
from .base import Layer

__all__ = [
    "ReLU", "ReLU6", "GELU", "Silu", "Swish", "Sigmoid", "Tanh", "Hardswish", "Hardsigmoid", "LeakyReLU",
    "ELU", "Softplus", "Softmax", "LogSoftmax", "Mish", "PReLU", "Hardtanh", "SiLU", "Tanhshrink", "Softsign",
    "SELU", "CELU", "GLU", "Hardshrink", "Softshrink", "LogSigmoid", "ThresholdedReLU", "Softmax2D",
    "RReLU",
]  # fmt: skip


def _activation_layer(name: str, fn, **defaults) -> type:
    """A Layer class whose constructor takes ``defaults`` (Paddle's names and defaults) and whose
    forward is ``fn(x, **those values)``."""

    def __init__(self, *args, name=None, **kwargs):
        Layer.__init__(self)
        if len(args) > len(defaults):
            raise TypeError(f"{type(self).__name__} takes at most {len(defaults)} positional arguments")
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(unknown)}")
        self._config = {**defaults, **dict(zip(defaults, args, strict=False)), **kwargs}

    def forward(self, x):
        return fn(x, **self._config)

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self._config.items())

    return type(name, (Layer,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr})


ReLU = _activation_layer("ReLU", A.relu)
ReLU6 = _activation_layer("ReLU6", A.relu6)
GELU = _activation_layer("GELU", A.gelu, approximate=False)
Silu = _activation_layer("Silu", A.silu, inplace=False)
Swish = _activation_layer("Swish", A.swish)
Sigmoid = _activation_layer("Sigmoid", A.sigmoid)
Tanh = _activation_layer("Tanh", A.tanh)
Hardswish = _activation_layer("Hardswish", A.hardswish)
Hardsigmoid = _activation_layer("Hardsigmoid", A.hardsigmoid)
LeakyReLU = _activation_layer("LeakyReLU", A.leaky_relu, negative_slope=0.01)
ELU = _activation_layer("ELU", A.elu, alpha=1.0)
Softplus = _activation_layer("Softplus", A.softplus, beta=1, threshold=20)
Softmax = _activation_layer("Softmax", A.softmax, axis=-1)
LogSoftmax = _activation_layer("LogSoftmax", A.log_softmax, axis=-1)
Mish = _activation_layer("Mish", A.mish)
Hardtanh = _activation_layer("Hardtanh", A.hardtanh, min=-1.0, max=1.0)
SiLU = _activation_layer("SiLU", A.silu, inplace=False)
Tanhshrink = _activation_layer("Tanhshrink", A.tanhshrink)
Softsign = _activation_layer("Softsign", A.softsign)
SELU = _activation_layer("SELU", A.selu, scale=1.0507009873554805, alpha=1.6732632423543772)
CELU = _activation_layer("CELU", A.celu, alpha=1.0)
GLU = _activation_layer("GLU", A.glu, axis=-1)
Hardshrink = _activation_layer("Hardshrink", A.hardshrink, threshold=0.5)
Softshrink = _activation_layer("Softshrink", A.softshrink, threshold=0.5)
LogSigmoid = _activation_layer("LogSigmoid", A.log_sigmoid)
ThresholdedReLU = _activation_layer("ThresholdedReLU", A.thresholded_relu, threshold=1.0, value=0.0)


class PReLU(Layer):
    """``max(0, x) + weight * min(0, x)`` with one learned slope, or one per channel."""

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, data_format="NCHW", name=None):
        super().__init__()
        self._num_parameters, self._init, self._data_format = num_parameters, init, data_format
        self._weight = self.create_parameter([num_parameters], attr=weight_attr, default_initializer=_constant(init))

    def forward(self, x):
        return A.prelu(x, self._weight, data_format=self._data_format)

    def extra_repr(self):
        return (
            f"num_parameters={self._num_parameters}, data_format={self._data_format}, "
            f"init={self._init}, dtype={self._dtype}"
        )


def _constant(value):
    return init.Constant(float(value))


class Softmax2D(Layer):
    """Softmax over the channel dim of [N, C, H, W] (or [C, H, W]) inputs."""

    def forward(self, x):
        if x.ndim not in (3, 4):
            raise ShapeError(f"Softmax2D: expected a 3-D or 4-D input, got shape {x.shape}")
        return A.softmax(x, axis=-3)


class RReLU(Layer):
    """Randomized leaky ReLU: random slopes in [lower, upper] in training, their mean in eval."""

    def __init__(self, lower=1.0 / 8.0, upper=1.0 / 3.0, name=None):
        super().__init__()
        self._lower, self._upper = lower, upper

    def forward(self, x):
        return rrelu(x, self._lower, self._upper, training=self.training)

    def extra_repr(self):
        return f"lower={self._lower}, upper={self._upper}"
