"""``paddle.optimizer.RMSProp``: mean-square (optionally centered) scaling with momentum."""

from __future__ import annotations

import numpy as np

from ..kernels import optimizer as kernels
from .optimizer import Optimizer, attr, flat

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    def __init__(
        self,
        learning_rate,
        rho: float = 0.95,
        epsilon: float = 1.0e-6,
        momentum: float = 0.0,
        centered: bool = False,
        parameters=None,
        weight_decay=None,
        grad_clip=None,
        name=None,
    ) -> None:
        for label, value in (
            ("learning_rate", learning_rate),
            ("rho", rho),
            ("epsilon", epsilon),
            ("momentum", momentum),
        ):
            if value is None:
                raise ValueError(f"{label} is not set.")
        if not 0.0 <= epsilon:
            raise ValueError(f"Invalid value of epsilon, expect epsilon >= 0, got {epsilon}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid value of momentum, expect momentum >= 0, got {momentum}")
        if not 0.0 <= rho:
            raise ValueError(f"Invalid value of rho, expect rho >= 0, got {rho}")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._setup_groups({"rho": rho, "epsilon": epsilon, "momentum": momentum, "centered": centered})

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        centered = bool(self._hyper(group, "centered"))
        moment = self._accumulator("momentum", param)
        mean_square = self._accumulator("mean_square", param)
        mean_grad = self._accumulator("mean_grad", param)
        rho = attr(kind, self._hyper(group, "rho"))
        kernels.rmsprop(
            flat(param),
            grad,
            mean_square,
            mean_grad if centered else np.empty(0, grad.dtype),
            moment,
            rho,
            kind(1) - rho,
            attr(kind, self._hyper(group, "epsilon")),
            attr(kind, self._hyper(group, "momentum")),
            lr,
            centered,
        )
