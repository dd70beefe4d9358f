"""``paddle.optimizer.RAdam``: Adam whose adaptive step is switched on, and rectified, once the
variance of the adaptive rate is tractable (``rho_t > 5``):

    m_hat = m / (1 - beta1^t);  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    rho_t > 5:  p -= lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v) + epsilon)
    otherwise:  p -= lr * m_hat

with ``rho_inf = 2 / (1 - beta2) - 1``. The accumulator ``rho`` holds ``t beta2^t / (1 - beta2^t)``,
advanced by its recurrence as Paddle does; ``beta1_pow``/``beta2_pow`` are in the parameter's shape.
"""

from __future__ import annotations

import numpy as np

from ._moments import beta_defaults, betas, powers_and_moments, update_moments
from .optimizer import Optimizer, flat

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(
        self, learning_rate=0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1.0e-8,
        parameters=None, weight_decay=None, grad_clip=None, name=None,
    ) -> None:  # fmt: skip
        defaults = beta_defaults(beta1, beta2, epsilon, learning_rate)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._setup_groups(defaults)

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        one, two = kind(1), kind(2)
        beta1, beta2, epsilon = betas(self, group, kind)
        beta1_pow, beta2_pow, rho, moment1, moment2 = powers_and_moments(self, param, "beta1_pow", "beta2_pow", "rho")
        beta1_pow *= beta1
        beta2_pow *= beta2
        rho[:] = (rho * (beta2 - beta2_pow) + beta2_pow) / (one - beta2_pow)
        rho_inf = two / (one - beta2) - one
        rho_t = rho_inf - two * rho
        update_moments(moment1, moment2, grad, beta1, beta2)
        m_hat = moment1 / (one - beta1_pow)
        with np.errstate(invalid="ignore", divide="ignore"):  # r_t is only read where rho_t > 5
            rect = np.sqrt(
                (rho_t - kind(4)) * (rho_t - two) * rho_inf / ((rho_inf - kind(4)) * (rho_inf - two) * rho_t)
            )
        adaptive = np.sqrt(one - beta2_pow) / (np.sqrt(moment2) + epsilon)
        values = flat(param)
        values -= lr * np.where(rho_t > kind(5), m_hat * rect * adaptive, m_hat)
