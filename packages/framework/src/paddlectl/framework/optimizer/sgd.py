"""``paddle.optimizer.SGD``: ``p -= lr * g``; a sparse gradient moves only its rows."""

from __future__ import annotations

from ..kernels import optimizer as kernels
from .optimizer import Optimizer, flat, update_rows

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(
        self, learning_rate=0.001, parameters=None, weight_decay=None, grad_clip=None, multi_precision=False, name=None
    ) -> None:
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision
        self._setup_groups({})

    def _update(self, param, grad, lr, group) -> None:
        kernels.sgd(flat(param), grad, lr)

    def _sparse_update(self, param, grad, lr, group) -> None:
        update_rows(param, grad, [], lambda p, g: kernels.sgd(p, g, lr))
