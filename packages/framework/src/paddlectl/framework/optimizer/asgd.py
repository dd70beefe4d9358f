"""``paddle.optimizer.ASGD``: averaged SGD over the last ``batch_num`` gradients (SAG):

    i = m % n;  d = d - y[i] + g;  y[i] = g;  m += 1
    p -= lr / min(m, n) * d

``d`` (the running sum), ``y`` (the last ``n`` gradients, shape ``[n, *p.shape]``) and ``m``
(the step count, int64 [1]) are the accumulators Paddle saves.
"""

from __future__ import annotations

from .optimizer import Optimizer, flat

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(
        self, learning_rate=0.001, batch_num: int = 1, parameters=None, weight_decay=None, grad_clip=None,
        multi_precision: bool = False, name=None,
    ) -> None:  # fmt: skip
        if learning_rate is None:
            raise ValueError("learning_rate should not be none")
        if batch_num is None:
            raise ValueError("batch_num should not be none")
        if isinstance(batch_num, bool) or not isinstance(batch_num, int) or batch_num <= 0:
            raise ValueError(f"batch_num should be an integer greater than 0, got {batch_num!r}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision
        self._n = batch_num
        self._setup_groups({})

    def _update(self, param, grad, lr, group) -> None:
        n = self._n
        total = self._accumulator("d", param)
        seen = self._accumulator("y", param, shape=[n, *param._data.shape]).reshape(n, -1)
        count = self._accumulator("m", param, shape=[1], dtype="int64")
        i = int(count[0]) % n
        total[:] = total - seen[i] + grad
        seen[i] = grad
        count[0] += 1
        values = flat(param)
        values -= (lr / grad.dtype.type(min(int(count[0]), n))) * total
