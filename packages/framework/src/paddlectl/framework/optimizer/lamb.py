"""``paddle.optimizer.Lamb``: Adam's direction with decoupled weight decay, scaled per parameter
by the trust ratio ``||p|| / ||r||`` (layer-wise adaptation):

    m_hat = m / (1 - beta1^t);  v_hat = v / (1 - beta2^t)
    r = m_hat / (sqrt(v_hat) + epsilon) + wd * p
    p -= lr * (||p|| / ||r|| if both norms are > 0 else 1) * r

The ratio applies where the decay does (``exclude_from_weight_decay_fn`` turns both off for a
parameter) unless ``always_adapt``. ``beta1_pow_acc``/``beta2_pow_acc`` have shape [1].
"""

from __future__ import annotations

import numpy as np

from ._moments import beta_defaults, betas, update_moments
from .optimizer import Optimizer, attr, flat

__all__ = ["Lamb"]


class Lamb(Optimizer):
    def __init__(
        self, learning_rate=0.001, lamb_weight_decay: float = 0.01, beta1: float = 0.9, beta2: float = 0.999,
        epsilon: float = 1e-6, parameters=None, grad_clip=None, exclude_from_weight_decay_fn=None,
        multi_precision: bool = False, always_adapt: bool = False, name=None,
    ) -> None:  # fmt: skip
        defaults = beta_defaults(beta1, beta2, epsilon)
        if exclude_from_weight_decay_fn is not None and not callable(exclude_from_weight_decay_fn):
            raise TypeError("exclude_from_weight_decay_fn must be a function of a parameter returning a bool")
        super().__init__(learning_rate, parameters, None, grad_clip, name)
        self._multi_precision = multi_precision
        self.always_adapt = always_adapt
        self._setup_groups(
            {
                **defaults,
                "lamb_weight_decay": lamb_weight_decay,
                "exclude_from_weight_decay_fn": exclude_from_weight_decay_fn,
            }
        )

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        one = kind(1)
        beta1, beta2, epsilon = betas(self, group, kind)
        exclude = self._hyper(group, "exclude_from_weight_decay_fn")
        decay = 0.0 if exclude is not None and exclude(param) else self._hyper(group, "lamb_weight_decay")
        moment1 = self._accumulator("moment1", param)
        moment2 = self._accumulator("moment2", param)
        beta1_pow = self._accumulator("beta1_pow_acc", param, fill_value=beta1, shape=[1])
        beta2_pow = self._accumulator("beta2_pow_acc", param, fill_value=beta2, shape=[1])
        update_moments(moment1, moment2, grad, beta1, beta2)
        m_hat = moment1 / (one - beta1_pow[0])
        v_hat = moment2 / (one - beta2_pow[0])
        values = flat(param)
        direction = m_hat / (np.sqrt(v_hat) + epsilon) + attr(kind, decay) * values
        ratio = one
        if decay != 0.0 or self.always_adapt:
            p_norm, r_norm = np.sqrt(np.sum(values * values)), np.sqrt(np.sum(direction * direction))
            if p_norm > 0 and r_norm > 0:
                ratio = kind(p_norm / r_norm)
        values -= lr * ratio * direction
        beta1_pow[0] = beta1_pow[0] * beta1
        beta2_pow[0] = beta2_pow[0] * beta2
