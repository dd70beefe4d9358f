"""``paddle.optimizer.NAdam``: Adam with Nesterov momentum and a momentum schedule
``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))``:

    m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g^2
    m_hat = mu_{t+1} * m / (1 - prod mu_1..t+1) + (1 - mu_t) * g / (1 - prod mu_1..t)
    p -= lr * m_hat / (sqrt(v / (1 - beta2^t)) + epsilon)

The accumulators are Paddle's: ``momentum_decay_pow`` (0.96^t), ``beta2_pow``, ``mu_product``
(all in the parameter's shape, starting at 1), ``moment1`` and ``moment2``.
"""

from __future__ import annotations

import numpy as np

from .adam import _check_betas, _scalar
from .optimizer import Optimizer, attr, flat

__all__ = ["NAdam"]


class NAdam(Optimizer):
    def __init__(
        self, learning_rate=0.002, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1.0e-8,
        momentum_decay: float = 0.004, parameters=None, weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        if isinstance(learning_rate, float) and not 0.0 <= learning_rate:
            raise ValueError(f"Invalid learning rate: {learning_rate}, expect learning_rate >= 0.")
        _check_betas(beta1, beta2, epsilon)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}, expect momentum_decay >= 0.")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        defaults = {"beta1": _scalar(beta1), "beta2": _scalar(beta2), "epsilon": _scalar(epsilon)}
        self._setup_groups({**defaults, "momentum_decay": momentum_decay})

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        one, half, decay_base = kind(1), kind(0.5), kind(0.96)
        beta1, beta2 = attr(kind, self._hyper(group, "beta1")), attr(kind, self._hyper(group, "beta2"))
        epsilon = attr(kind, self._hyper(group, "epsilon"))
        psi = attr(kind, self._hyper(group, "momentum_decay"))
        decay_pow = self._accumulator("momentum_decay_pow", param, fill_value=1.0)
        beta2_pow = self._accumulator("beta2_pow", param, fill_value=1.0)
        mu_product = self._accumulator("mu_product", param, fill_value=1.0)
        moment1 = self._accumulator("moment1", param)
        moment2 = self._accumulator("moment2", param)
        decay_pow *= decay_base
        beta2_pow *= beta2
        mu_t = beta1 * (one - half * np.power(decay_pow, psi))
        mu_next = beta1 * (one - half * np.power(decay_pow * decay_base, psi))
        mu_product *= mu_t
        moment1[:] = beta1 * moment1 + (one - beta1) * grad
        moment2[:] = beta2 * moment2 + (one - beta2) * grad * grad
        m_hat = mu_next * moment1 / (one - mu_product * mu_next) + (one - mu_t) * grad / (one - mu_product)
        v_hat = moment2 / (one - beta2_pow)
        values = flat(param)
        values -= lr * m_hat / (np.sqrt(v_hat) + epsilon)
