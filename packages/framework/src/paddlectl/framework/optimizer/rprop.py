"""``paddle.optimizer.Rprop``: resilient backpropagation, one step size per element driven by the
sign of the gradient alone:

    s = g * prev;  lr_e *= eta+ where s > 0, eta- where s < 0;  clip lr_e to learning_rate_range
    g = 0 where s < 0;  p -= sign(g) * lr_e;  prev = g

The per-element step sizes (accumulator ``learning_rates``) start at ``learning_rate``, so a
scheduler only sets where they start, as in Paddle; ``prevs`` holds the last gradient.
"""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, attr, flat

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(
        self, learning_rate=0.001, learning_rate_range=(1e-5, 50), parameters=None, etas=(0.5, 1.2),
        grad_clip=None, multi_precision: bool = False, name=None,
    ) -> None:  # fmt: skip
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        low, high = _pair("learning_rate_range", learning_rate_range)
        initial = learning_rate if isinstance(learning_rate, float) else learning_rate()
        if not 0.0 < low <= initial <= high:
            raise ValueError("'0.0 < learning_rate_range[0] <= learning_rate <= learning_rate_range[1]' must be true")
        eta_minus, eta_plus = _pair("etas", etas)
        if not 0.0 < eta_minus < 1.0 < eta_plus:
            raise ValueError("'0.0 < etas[0] < 1.0 < etas[1]' must be true")
        super().__init__(learning_rate, parameters, 0.0, grad_clip, name)
        self._multi_precision = multi_precision
        self._initial_learning_rate = initial
        self._setup_groups({"learning_rate_range": (low, high), "etas": (eta_minus, eta_plus)})

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        low, high = (attr(kind, v) for v in self._hyper(group, "learning_rate_range"))
        eta_minus, eta_plus = (attr(kind, v) for v in self._hyper(group, "etas"))
        prev = self._accumulator("prevs", param)
        rates = self._accumulator("learning_rates", param, fill_value=self._initial_learning_rate)
        product = grad * prev
        eta = np.where(product > 0, eta_plus, np.where(product < 0, eta_minus, kind(1))).astype(grad.dtype)
        np.clip(rates * eta, low, high, out=rates)
        grad = np.where(product < 0, kind(0), grad)
        values = flat(param)
        values -= np.sign(grad) * rates
        prev[:] = grad


def _pair(label: str, value) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise TypeError(f"{label} must be a pair (low, high) of floats, got {value!r}")
    return float(value[0]), float(value[1])
