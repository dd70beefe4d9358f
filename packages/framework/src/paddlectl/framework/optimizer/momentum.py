"""``paddle.optimizer.Momentum``: Paddle's velocity form ``v = mu*v + g; p -= lr*v``
(Nesterov: ``p -= lr*(g + mu*v)``)."""

from __future__ import annotations

from ..kernels import optimizer as kernels
from .optimizer import Optimizer, attr, flat
from .regularizer import L2Decay

__all__ = ["Momentum"]


class Momentum(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        momentum: float = 0.9,
        parameters=None,
        use_nesterov: bool = False,
        weight_decay=None,
        grad_clip=None,
        multi_precision: bool = False,
        rescale_grad: float = 1.0,
        use_multi_tensor: bool = False,
        name=None,
    ) -> None:
        if momentum is None:
            raise ValueError("momentum is not set")
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._multi_precision = multi_precision
        self._setup_groups({"momentum": momentum, "use_nesterov": use_nesterov, "rescale_grad": rescale_grad})

    def _regularized(self, param, grad):
        """Paddle fuses L2 decay into the momentum kernel, with the coefficient as a float32 attribute."""
        regularizer = getattr(param, "regularizer", None) or self.regularization
        if isinstance(regularizer, L2Decay):
            return grad + attr(param._data.dtype.type, regularizer.coeff) * param._data
        return super()._regularized(param, grad)

    def _update(self, param, grad, lr, group) -> None:
        kind = grad.dtype.type
        rescale = self._hyper(group, "rescale_grad")
        if rescale != 1.0:
            grad = attr(kind, rescale) * grad
        velocity = self._accumulator("velocity", param)
        mu = attr(kind, self._hyper(group, "momentum"))
        kernels.momentum(flat(param), grad, velocity, mu, lr, bool(self._hyper(group, "use_nesterov")))
