"""``paddle.autograd``: gradients (``grad``, ``backward``, grad-mode switches), Jacobians and
Hessians evaluated lazily (``jacobian``, ``hessian``), and ops written in Python (``PyLayer``)."""

from ..core.autograd import enable_grad, grad, is_grad_enabled, no_grad, set_grad_enabled
from .backward_mode import backward
from .functional import Hessian, Jacobian, hessian, jacobian
from .py_layer import PyLayer, PyLayerContext

Function = PyLayer

__all__ = [
    "jacobian",
    "hessian",
    "backward",
    "PyLayer",
    "Function",
    "PyLayerContext",
    "Jacobian",
    "Hessian",
    "grad",
    "no_grad",
    "enable_grad",
    "is_grad_enabled",
    "set_grad_enabled",
]
