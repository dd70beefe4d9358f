"""Linear, Flatten, Unflatten and Identity: the layers every model uses."""

from __future__ import annotations

from ...errors import ShapeError
from ...ops.linalg import matmul
from ...ops.rearrange import unflatten
from ...ops.shape import flatten
from .base import Layer

__all__ = ["Linear", "Flatten", "Unflatten", "Identity"]


class Linear(Layer):
    """``y = x @ W + b`` with W stored as [in_features, out_features], as in Paddle."""

    def __init__(self, in_features: int, out_features: int, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__()
        if in_features <= 0 or out_features <= 0:
            raise ValueError(
                f"Linear: in_features and out_features must be positive, got {in_features}, {out_features}"
            )
        self.in_features, self.out_features = in_features, out_features
        self.weight = self.create_parameter([in_features, out_features], attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ShapeError(
                f"Linear: input's last dim is {x.shape[-1]} (shape {x.shape}), expected {self.in_features}"
            )
        out = matmul(x, self.weight)
        return out + self.bias if self.bias is not None else out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, dtype={self._dtype}"


class Flatten(Layer):
    def __init__(self, start_axis: int = 1, stop_axis: int = -1) -> None:
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, x):
        return flatten(x, self.start_axis, self.stop_axis)


class Unflatten(Layer):
    def __init__(self, axis: int, shape, name=None) -> None:
        super().__init__()
        self.axis, self.shape = axis, shape

    def forward(self, x):
        return unflatten(x, self.axis, self.shape)


class Identity(Layer):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
        return x
