"""``paddle.optimizer.Adagrad``: ``m += g^2; p -= lr*g / (sqrt(m) + epsilon)``; a sparse gradient
updates only its rows' moments and values (Paddle's sparse kernel)."""

from __future__ import annotations

from ..kernels import optimizer as kernels
from .optimizer import Optimizer, attr, flat, update_rows

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    def __init__(
        self,
        learning_rate,
        epsilon: float = 1.0e-6,
        parameters=None,
        weight_decay=None,
        grad_clip=None,
        name=None,
        initial_accumulator_value: float = 0.0,
        multi_precision: bool = False,
    ) -> None:
        if learning_rate is None:
            raise ValueError("learning_rate is not set.")
        if epsilon is None:
            raise ValueError("epsilon is not set.")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision
        self.initial_accumulator_value = initial_accumulator_value
        self._setup_groups({"epsilon": epsilon, "initial_accumulator_value": initial_accumulator_value})

    def _update(self, param, grad, lr, group) -> None:
        moment = self._moment(param, group)
        kernels.adagrad(flat(param), grad, moment, attr(grad.dtype.type, self._hyper(group, "epsilon")), lr)

    def _sparse_update(self, param, grad, lr, group) -> None:
        epsilon = attr(param._data.dtype.type, self._hyper(group, "epsilon"))
        update_rows(param, grad, [self._moment(param, group)], lambda p, g, m: kernels.adagrad(p, g, m, epsilon, lr))

    def _moment(self, param, group):
        return self._accumulator("moment", param, fill_value=self._hyper(group, "initial_accumulator_value"))
