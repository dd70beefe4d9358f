"""Normalisation layers. BatchNorm's running statistics are non-trainable parameters named
``_mean`` and ``_variance``, exactly as in Paddle, so state dicts exchange by key."""

from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from ...ops import activation as A
from ...ops import norm as N
from .. import initializer as init
from .base import Layer, ParamAttr

__all__ = [
    "BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm", "GroupNorm",
    "InstanceNorm1D", "InstanceNorm2D", "InstanceNorm3D",
]  # fmt: skip


def _check_rank(layer: Layer, x, ranks: tuple[int, ...]) -> None:
    if x.ndim not in ranks:
        want = " or ".join(f"{r}D" for r in ranks)
        raise ShapeError(f"{type(layer).__name__}: expected {want} input, got {x.ndim}D input of shape {x.shape}")


def _scale_and_shift(layer: Layer, n, weight_attr, bias_attr, weight_name: str = "weight"):
    """Paddle's affine parameters: weight starts at 1, bias at 0; an attr of False leaves it out."""
    setattr(
        layer,
        weight_name,
        layer.create_parameter([n], attr=weight_attr, default_initializer=init.Constant(1.0))
        if weight_attr is not False
        else None,
    )
    layer.bias = layer.create_parameter([n], attr=bias_attr, is_bias=True) if bias_attr is not False else None


class _BatchNormBase(Layer):
    _ranks: tuple[int, ...] = (2, 3, 4, 5)

    def __init__(
        self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format="NCHW",
        use_global_stats=None, name=None,
    ):  # fmt: skip
        super().__init__()
        self._num_features, self._momentum, self._epsilon = num_features, momentum, epsilon
        self._data_format, self._use_global_stats = data_format, use_global_stats
        _scale_and_shift(self, num_features, weight_attr, bias_attr)
        # Running statistics are non-trainable parameters named .w_1/.w_2, as in Paddle.
        self._mean = self.create_parameter([num_features], ParamAttr(initializer=init.Constant(0.0), trainable=False))
        self._variance = self.create_parameter(
            [num_features], ParamAttr(initializer=init.Constant(1.0), trainable=False)
        )

    def _global_stats(self):
        """Paddle's use_global_stats; None lets batch_norm decide from ``training``."""
        return self._use_global_stats

    def forward(self, x):
        _check_rank(self, x, self._ranks)
        return N.batch_norm(
            x, self._mean, self._variance, self.weight, self.bias, training=self.training, momentum=self._momentum,
            epsilon=self._epsilon, data_format=self._data_format, use_global_stats=self._global_stats(),
        )  # fmt: skip

    def extra_repr(self):
        text = f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}"
        return text if self._data_format == "NCHW" else f"{text}, data_format={self._data_format}"


class BatchNorm1D(_BatchNormBase):
    _ranks = (2, 3)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCL", use_global_stats=None, name=None):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats)


class BatchNorm2D(_BatchNormBase):
    _ranks = (4,)


class BatchNorm3D(_BatchNormBase):
    _ranks = (5,)

    def __init__(self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None,
                 data_format="NCDHW", use_global_stats=None, name=None):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats)


class BatchNorm(_BatchNormBase):
    """Paddle's older batch norm: any rank 2-5, an optional activation, ``is_test`` and ``data_layout``."""

    def __init__(
        self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None, bias_attr=None,
        dtype="float32", data_layout="NCHW", in_place=False, moving_mean_name=None, moving_variance_name=None,
        do_model_average_for_mean_and_var=True, use_global_stats=False, trainable_statistics=False,
    ):  # fmt: skip
        Layer.__init__(self, dtype=dtype)
        self._act, self._is_test, self._trainable_statistics = act, is_test, trainable_statistics
        if act is not None and not hasattr(A, act):
            raise ValueError(f"BatchNorm: unknown activation {act!r}; use a name from paddle.nn.functional")
        layout = data_layout if data_layout in N.CHANNELS_LAST else "NCHW"
        _BatchNormBase.__init__(self, num_channels, momentum, epsilon, param_attr, bias_attr, layout, use_global_stats)

    def _global_stats(self) -> bool:
        # As Paddle's dygraph BatchNorm: ``is_test`` is ignored (train()/eval() decide), and
        # ``trainable_statistics`` keeps using (and accumulating) batch statistics after eval().
        return bool(self._use_global_stats) or not (self.training or self._trainable_statistics)

    def forward(self, x):
        out = super().forward(x)
        return getattr(A, self._act)(out) if self._act else out

    def extra_repr(self):
        return ""


class LayerNorm(Layer):
    def __init__(
        self, normalized_shape, epsilon=1e-05, *, elementwise_affine=True, bias=True, device=None, dtype=None,
        weight_attr=None, bias_attr=None, name=None,
    ):  # fmt: skip
        super().__init__(dtype=dtype or "float32")
        shape = [int(normalized_shape)] if isinstance(normalized_shape, int | np.integer) else list(normalized_shape)
        self._normalized_shape, self._epsilon = shape, epsilon
        n = math.prod(shape)
        _scale_and_shift(
            self,
            n,
            weight_attr if elementwise_affine else False,
            bias_attr if elementwise_affine and bias else False,
        )

    def forward(self, x):
        return N.layer_norm(x, self._normalized_shape, self.weight, self.bias, self._epsilon)

    def extra_repr(self):
        return f"normalized_shape={self._normalized_shape}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    def __init__(
        self, num_groups, num_channels, epsilon=1e-05, *, affine=True, device=None, dtype=None, weight_attr=None,
        bias_attr=None, data_format="NCHW", name=None,
    ):  # fmt: skip
        super().__init__(dtype=dtype or "float32")
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self._num_groups, self._num_channels, self._epsilon = num_groups, num_channels, epsilon
        self._data_format = data_format
        _scale_and_shift(self, num_channels, weight_attr if affine else False, bias_attr if affine else False)

    def forward(self, x):
        return N.group_norm(x, self._num_groups, self._epsilon, self.weight, self.bias, self._data_format)

    def extra_repr(self):
        return f"num_groups={self._num_groups}, num_channels={self._num_channels}, epsilon={self._epsilon}"


class _InstanceNormBase(Layer):
    """Parameters are named ``scale`` and ``bias``, as in Paddle; both or neither (attr False)."""

    _ranks: tuple[int, ...] = (3, 4, 5)

    def __init__(self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None,
                 data_format="NCHW", name=None):  # fmt: skip
        super().__init__()
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(f"{type(self).__name__}: weight_attr and bias_attr must be set to False together")
        self._num_features, self._epsilon, self._momentum = num_features, epsilon, momentum
        _scale_and_shift(self, num_features, weight_attr, bias_attr, weight_name="scale")

    def forward(self, x):
        _check_rank(self, x, self._ranks)
        return N.instance_norm(x, weight=self.scale, bias=self.bias, eps=self._epsilon)

    def extra_repr(self):
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    _ranks = (3,)


class InstanceNorm2D(_InstanceNormBase):
    _ranks = (4,)


class InstanceNorm3D(_InstanceNormBase):
    _ranks = (5,)
