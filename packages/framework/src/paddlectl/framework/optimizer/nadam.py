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

from ._moments import beta_defaults, betas, powers_and_moments, update_moments
from .optimizer import Optimizer, attr, flat

__all__ = ["NAdam"]


class NAdam(Optimizer):
    def __init__(
        self, learning_rate=0.002, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1.0e-8,
        momentum_decay: float = 0.004, parameters=None, weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        defaults = beta_defaults(beta1, beta2, epsilon, learning_rate)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}, expect momentum_decay >= 0.")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._setup_groups({**defaults, "momentum_decay": momentum_decay})

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        one, half, decay_base = kind(1), kind(0.5), kind(0.96)
        beta1, beta2, epsilon = betas(self, group, kind)
        psi = attr(kind, self._hyper(group, "momentum_decay"))
        decay_pow, beta2_pow, mu_product, moment1, moment2 = powers_and_moments(
            self, param, "momentum_decay_pow", "beta2_pow", "mu_product"
        )
        decay_pow *= decay_base
        beta2_pow *= beta2
        mu_t = beta1 * (one - half * np.power(decay_pow, psi))
        mu_next = beta1 * (one - half * np.power(decay_pow * decay_base, psi))
        mu_product *= mu_t
        update_moments(moment1, moment2, grad, beta1, beta2)
        m_hat = mu_next * moment1 / (one - mu_product * mu_next) + (one - mu_t) * grad / (one - mu_product)
        v_hat = moment2 / (one - beta2_pow)
        values = flat(param)
        values -= lr * m_hat / (np.sqrt(v_hat) + epsilon)
