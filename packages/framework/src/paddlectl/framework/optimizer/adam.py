"""``paddle.optimizer.Adam`` and ``AdamW``, in Paddle's form of the bias correction:

    lr_t  = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
    p    -= lr_t * m / (sqrt(v) + epsilon * sqrt(1 - beta2^t))

with ``beta1^t``/``beta2^t`` kept per parameter as the accumulators ``beta1_pow_acc`` and
``beta2_pow_acc`` (shape [1]), as Paddle saves them. AdamW first decays the parameter,
``p *= 1 - lr * lr_ratio(p) * coeff``, for parameters ``apply_decay_param_fun(name)`` accepts.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..kernels import optimizer as kernels
from .optimizer import Optimizer, attr, flat, update_rows

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
        # lazy_mode only changes sparse (SelectedRows) updates: a dense gradient updates every row.
        return {"beta1": _scalar(beta1), "beta2": _scalar(beta2), "epsilon": _scalar(epsilon), "lazy_mode": lazy_mode}

    def _decay(self, param, lr, group):
        """AdamW's ``lr * lr_ratio * coeff`` for this parameter; Adam decays nothing."""
        return param._data.dtype.type(0)

    def _update(self, param, grad, lr, group) -> None:
        moments = self._moments(param)
        self._step(param, group, lambda kernel: kernel(flat(param), grad, *moments), lr)

    def _sparse_update(self, param, grad, lr, group) -> None:
        """``lazy_mode``: only the touched rows' moments and values move (Paddle's lazy Adam); else
        every row moves, as the dense update of the densified gradient. Both as Paddle 3.3.1's
        SelectedRows kernels compute them: the bias correction of step t uses ``beta^(t+1)`` (the
        powers advance before they are read), so even non-lazy sparse Adam differs from dense Adam."""
        if self._hyper(group, "lazy_mode"):
            m1, m2, m2_max = self._moments(param)
            states = [m1, m2] + ([m2_max] if self._amsgrad else [])

            def run(kernel):
                update_rows(param, grad, states, lambda p, g, a, b, c=m2_max: kernel(p, g, a, b, c))
        else:
            table = np.ascontiguousarray(grad.to_dense()._data).reshape(-1)
            moments = self._moments(param)

            def run(kernel):
                kernel(flat(param), table, *moments)

        self._step(param, group, run, lr, ahead=True)

    def _check_sparse(self, param, grad) -> None:
        super()._check_sparse(param, grad)
        if self.regularization is not None:
            raise ConfigError(
                f"{type(self).__name__} does not support weight_decay with sparse parameters ({param.name} has a "
                "sparse gradient), as Paddle; set weight_decay=None, or use sparse=False for that table"
            )

    def _moments(self, param) -> tuple:
        moment1 = self._accumulator("moment1", param)
        moment2 = self._accumulator("moment2", param)
        moment2_max = self._accumulator("moment2_max", param) if self._amsgrad else np.empty(0, param._data.dtype)
        return moment1, moment2, moment2_max

    def _step(self, param, group, run, lr, ahead: bool = False) -> None:
        """One Adam step: the bias-corrected scalars (from the powers one step ``ahead`` for sparse
        gradients, as Paddle's), then ``run(kernel)`` applies the kernel to the arrays it chooses
        (the whole table, or the touched rows), then the beta powers advance."""
        kind = param._data.dtype.type
        beta1, beta2 = kind(self._hyper(group, "beta1")), kind(self._hyper(group, "beta2"))
        epsilon = kind(self._hyper(group, "epsilon"))
        beta1_pow = self._accumulator("beta1_pow_acc", param, fill_value=beta1, shape=[1], dtype=param._data.dtype)
        beta2_pow = self._accumulator("beta2_pow_acc", param, fill_value=beta2, shape=[1], dtype=param._data.dtype)
        one = kind(1)
        pow1, pow2 = (beta1 * beta1_pow[0], beta2 * beta2_pow[0]) if ahead else (beta1_pow[0], beta2_pow[0])
        correction = np.sqrt(one - pow2)
        decay = self._decay(param, lr, group)
        lr_t = kind(self._corrected_lr(param, lr, group) * (correction / (one - pow1)))
        eps_t = kind(epsilon * correction)
        amsgrad = self._amsgrad
        run(
            lambda p, g, m1, m2, m2_max: kernels.adam(
                p, g, m1, m2, m2_max, amsgrad, beta1, one - beta1, beta2, one - beta2, lr_t, eps_t, decay
            )
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
    return float(value) if hasattr(value, "_data") else value  # a [1] Tensor too, as Paddle takes it


def _check_betas(beta1, beta2, epsilon) -> None:
    for label, value in (("beta1", beta1), ("beta2", beta2)):
        value = _scalar(value)
        if not 0 <= value < 1:
            raise ValueError(f"Invaild value of {label}, expect {label} in [0,1).")
    if not 0 <= _scalar(epsilon):
        raise ValueError("Invaild value of epsilon, expect epsilon >= 0.")
