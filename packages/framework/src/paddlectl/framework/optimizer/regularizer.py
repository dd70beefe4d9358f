"""``paddle.regularizer``: weight-decay terms added to a gradient before the update."""

from __future__ import annotations

import numpy as np

__all__ = ["L1Decay", "L2Decay", "WeightDecayRegularizer"]


class WeightDecayRegularizer:
    """Base: ``term(param)`` is the array added to the parameter's gradient."""

    def __init__(self, coeff: float = 0.0) -> None:
        if isinstance(coeff, bool) or not isinstance(coeff, int | float):
            raise TypeError(f"{type(self).__name__}: coeff must be a float, got {type(coeff).__name__}")
        self._coeff = float(coeff)

    @property
    def coeff(self) -> float:
        return self._coeff

    def term(self, param: np.ndarray) -> np.ndarray:
        raise TypeError(f"{type(self).__name__} must define term(); WeightDecayRegularizer is a base class")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(coeff={self._coeff})"


class L2Decay(WeightDecayRegularizer):
    """``coeff * param`` (the gradient of ``coeff/2 * ||param||^2``)."""

    def term(self, param: np.ndarray) -> np.ndarray:
        return param.dtype.type(self._coeff) * param


class L1Decay(WeightDecayRegularizer):
    """``coeff * sign(param)``."""

    def term(self, param: np.ndarray) -> np.ndarray:
        return param.dtype.type(self._coeff) * np.sign(param)
