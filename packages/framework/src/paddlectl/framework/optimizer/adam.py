"""``paddle.optimizer.Adam`` and ``AdamW``, in Paddle's form of the bias correction:

    lr_t  = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    p    -= lr_t * m / (sqrt(v) + epsilon * sqrt(1 - beta2^t))

with ``beta1^t``/``beta2^t`` kept per parameter as the accumulators ``beta1_pow_acc`` and
``beta2_pow_acc`` (shape [1]), as Paddle saves them. AdamW first decays the parameter,
``p *= 1 - lr * lr_ratio(p) * coeff``, for parameters ``apply_decay_param_fun(name)`` accepts.
"""

from __future__ import annotations

import numpy as np

from ..kernels import optimizer as kernels
from .optimizer import Optimizer, attr, flat

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters=None,
        weight_decay=None,
        grad_clip=None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        use_multi_tensor: bool = False,
        amsgrad: bool = False,
        name=None,
    ) -> None:
        _check_betas(beta1, beta2, epsilon)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision
        self._amsgrad = amsgrad
        self._setup_groups(self._adam_defaults(beta1, beta2, epsilon, lazy_mode))

    @staticmethod
    def _adam_defaults(beta1, beta2, epsilon, lazy_mode) -> dict:
        # lazy_mode only changes sparse (SelectedRows) updates; every gradient here is dense.
        return {"beta1": _scalar(beta1), "beta2": _scalar(beta2), "epsilon": _scalar(epsilon), "lazy_mode": lazy_mode}

    def _decay(self, param, lr, group):
        """AdamW's ``lr * lr_ratio * coeff`` for this parameter; Adam decays nothing."""
        return param._data.dtype.type(0)

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        beta1, beta2 = kind(self._hyper(group, "beta1")), kind(self._hyper(group, "beta2"))
        epsilon = kind(self._hyper(group, "epsilon"))
        moment1 = self._accumulator("moment1", param)
        moment2 = self._accumulator("moment2", param)
        moment2_max = self._accumulator("moment2_max", param) if self._amsgrad else np.empty(0, grad.dtype)
        beta1_pow = self._accumulator("beta1_pow_acc", param, fill_value=beta1, shape=[1], dtype=grad.dtype)
        beta2_pow = self._accumulator("beta2_pow_acc", param, fill_value=beta2, shape=[1], dtype=grad.dtype)
        one = kind(1)
        correction = np.sqrt(one - beta2_pow[0])
        decay = self._decay(param, lr, group)
        lr_t = self._corrected_lr(param, lr, group) * (correction / (one - beta1_pow[0]))
        kernels.adam(
            flat(param),
            grad,
            moment1,
            moment2,
            moment2_max,
            self._amsgrad,
            beta1,
            one - beta1,
            beta2,
            one - beta2,
            kind(lr_t),
            kind(epsilon * correction),
            decay,
        )
        beta1_pow[0] = beta1 * beta1_pow[0]
        beta2_pow[0] = beta2 * beta2_pow[0]

    def _corrected_lr(self, param, lr, group):
        return lr


class AdamW(Adam):
    """Adam with decoupled weight decay: ``weight_decay`` is the coefficient, not an L2 term."""

    _decoupled_weight_decay = True

    def __init__(
        self,
        learning_rate=0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters=None,
        weight_decay: float = 0.01,
        use_lowprecision_moment: bool = False,
        lr_ratio=None,
        apply_decay_param_fun=None,
        grad_clip=None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        amsgrad: bool = False,
        name=None,
    ) -> None:
        _check_betas(beta1, beta2, epsilon)
        if not isinstance(weight_decay, int | float) or isinstance(weight_decay, bool):
            raise TypeError(f"AdamW: weight_decay must be a float coefficient, got {type(weight_decay).__name__}")
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("'lr_ratio' should be a function that maps a parameter to a float")
        Optimizer.__init__(self, learning_rate, parameters, None, grad_clip, name)
        self._multi_precision = multi_precision
        self._amsgrad = amsgrad
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun
        self._coeff = float(weight_decay)
        defaults = self._adam_defaults(beta1, beta2, epsilon, lazy_mode)
        self._setup_groups({**defaults, "weight_decay": float(weight_decay)})

    def _ratio(self, param):
        return 1.0 if self._lr_ratio is None else self._lr_ratio(param)

    def _decay(self, param, lr, group):
        kind = param._data.dtype.type
        if self._apply_decay_param_fun is not None and not self._apply_decay_param_fun(param.name):
            return kind(0)
        return kind(lr * attr(kind, self._ratio(param)) * attr(kind, self._hyper(group, "weight_decay")))

    def _corrected_lr(self, param, lr, group):
        return lr * attr(param._data.dtype.type, self._ratio(param))


def _scalar(value):
    return float(value._data) if hasattr(value, "_data") else value


def _check_betas(beta1, beta2, epsilon) -> None:
    for label, value in (("beta1", beta1), ("beta2", beta2)):
        value = _scalar(value)
        if not 0 <= value < 1:
            raise ValueError(f"Invaild value of {label}, expect {label} in [0,1).")
    if not 0 <= _scalar(epsilon):
        raise ValueError("Invaild value of epsilon, expect epsilon >= 0.")
