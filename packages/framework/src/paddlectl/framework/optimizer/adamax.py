"""``paddle.optimizer.Adamax``: Adam with the infinity norm in place of the second moment:

    m = beta1 * m + (1 - beta1) * g
    u = max(beta2 * u + epsilon, |g|)
    p -= lr / (1 - beta1^t) * m / u

``beta1^t`` is the accumulator ``beta1_pow_acc`` (shape [1]), advanced after the update.
"""

from __future__ import annotations

import numpy as np

from ._moments import beta_defaults, betas
from .optimizer import Optimizer, flat

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(
        self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
        parameters=None, weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        defaults = beta_defaults(beta1, beta2, epsilon)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._setup_groups(defaults)

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        beta1, beta2, epsilon = betas(self, group, kind)
        moment = self._accumulator("moment", param)
        inf_norm = self._accumulator("inf_norm", param)
        beta1_pow = self._accumulator("beta1_pow_acc", param, fill_value=beta1, shape=[1])
        moment[:] = beta1 * moment + (kind(1) - beta1) * grad
        np.maximum(beta2 * inf_norm + epsilon, np.abs(grad), out=inf_norm)
        values = flat(param)
        values -= kind(lr / (kind(1) - beta1_pow[0])) * (moment / inf_norm)
        beta1_pow[0] = beta1_pow[0] * beta1
