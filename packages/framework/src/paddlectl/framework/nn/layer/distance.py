"""Distance layers: cosine similarity, pairwise distance and the bilinear form, over ``ops.distance``."""

from __future__ import annotations

from ...ops import distance as D
from .base import Layer

__all__ = ["CosineSimilarity", "PairwiseDistance", "Bilinear"]


class _TwoInput(Layer):
    """A layer of two inputs whose forward is a functional op with fixed keyword arguments."""

    _fn = None

    def __init__(self, **config) -> None:
        super().__init__()
        self._config = config

    def forward(self, x, y):
        return type(self)._fn(x, y, **self._config)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._config.items())


class CosineSimilarity(_TwoInput):
    _fn = staticmethod(D.cosine_similarity)

    def __init__(self, axis: int = 1, eps: float = 1e-8) -> None:
        super().__init__(axis=axis, eps=eps)


class PairwiseDistance(_TwoInput):
    _fn = staticmethod(D.pairwise_distance)

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False, name=None) -> None:
        super().__init__(p=p, epsilon=epsilon, keepdim=keepdim)


class Bilinear(Layer):
    """``out = x1 W x2 + b`` with ``weight [out, in1, in2]`` and ``bias [1, out]``, as Paddle stores them."""

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__()
        self._in1, self._in2, self._out = in1_features, in2_features, out_features
        self.weight = self.create_parameter([out_features, in1_features, in2_features], attr=weight_attr)
        self.bias = self.create_parameter([1, out_features], attr=bias_attr, is_bias=True)

    def forward(self, x1, x2):
        return D.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in1_features={self._in1}, in2_features={self._in2}, out_features={self._out}, dtype={self._dtype}"
