"""What Adamax, NAdam, RAdam and Lamb share with Adam: the (beta1, beta2, epsilon) hyperparameters,
checked as Adam checks them, and the two exponential moving averages of the gradient."""

from __future__ import annotations

import numpy as np

from .adam import _check_betas, _scalar
from .optimizer import attr


def beta_defaults(beta1, beta2, epsilon, learning_rate=None) -> dict:
    """The group defaults, after Paddle's range checks (a beta in [0, 1), epsilon >= 0, and a
    float ``learning_rate``, when given, >= 0)."""
    if isinstance(learning_rate, float) and not 0.0 <= learning_rate:
        raise ValueError(f"Invalid learning rate: {learning_rate}, expect learning_rate >= 0.")
    _check_betas(beta1, beta2, epsilon)
    return {"beta1": _scalar(beta1), "beta2": _scalar(beta2), "epsilon": _scalar(epsilon)}


def betas(optimizer, group: dict, kind) -> tuple:
    """(beta1, beta2, epsilon) of ``group`` in the parameter's dtype, through float32 as Paddle's attrs."""
    return tuple(attr(kind, optimizer._hyper(group, key)) for key in ("beta1", "beta2", "epsilon"))


def update_moments(moment1: np.ndarray, moment2: np.ndarray, grad: np.ndarray, beta1, beta2) -> None:
    """``m = beta1 m + (1 - beta1) g`` and ``v = beta2 v + (1 - beta2) g^2``, in place."""
    one = grad.dtype.type(1)
    moment1[:] = beta1 * moment1 + (one - beta1) * grad
    moment2[:] = beta2 * moment2 + (one - beta2) * grad * grad


def powers_and_moments(optimizer, param, *powers: str) -> list[np.ndarray]:
    """The accumulators ``powers`` (running products, starting at 1), then ``moment1``, ``moment2``."""
    found = [optimizer._accumulator(name, param, fill_value=1.0) for name in powers]
    return found + [optimizer._accumulator("moment1", param), optimizer._accumulator("moment2", param)]
