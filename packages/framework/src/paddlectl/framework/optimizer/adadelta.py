"""``paddle.optimizer.Adadelta``: step sizes from running averages of squared gradients and
squared updates, scaled by the learning rate as Paddle's kernel does:

    E[g^2]  = rho * E[g^2] + (1 - rho) * g^2
    dx      = -sqrt((E[dx^2] + epsilon) / (E[g^2] + epsilon)) * g
    E[dx^2] = rho * E[dx^2] + (1 - rho) * dx^2
    p      += lr * dx
"""

from __future__ import annotations

import numpy as np

from .optimizer import Optimizer, attr, flat

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(
        self, learning_rate=0.001, epsilon: float = 1.0e-6, rho: float = 0.95, parameters=None,
        weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        for label, value in (("learning_rate", learning_rate), ("epsilon", epsilon), ("rho", rho)):
            if value is None:
                raise ValueError(f"{label} is not set.")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._setup_groups({"epsilon": epsilon, "rho": rho})

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        rho, epsilon = attr(kind, self._hyper(group, "rho")), attr(kind, self._hyper(group, "epsilon"))
        avg_grad = self._accumulator("_avg_squared_grad", param)
        avg_update = self._accumulator("_avg_squared_update", param)
        avg_grad[:] = rho * avg_grad + (kind(1) - rho) * grad * grad
        step = -np.sqrt((avg_update + epsilon) / (avg_grad + epsilon)) * grad
        avg_update[:] = rho * avg_update + (kind(1) - rho) * step * step
        values = flat(param)
        values += lr * step
