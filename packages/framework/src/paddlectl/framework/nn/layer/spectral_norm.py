"""``paddle.nn.SpectralNorm``: a weight divided by its largest singular value, estimated by power
iteration (Miyato et al., https://arxiv.org/abs/1802.05957).

The weight is viewed as an ``[h, w]`` matrix (``dim`` moved to the front, the rest flattened).
Starting from the layer's ``weight_u`` [h] and ``weight_v`` [w] (drawn from N(0, 1) when it is
built, as Paddle draws them), each of ``power_iters`` rounds sets ``v = W^T u / (|W^T u| + eps)``
then ``u = W v / (|W v| + eps)``; ``sigma = u . W v`` and the output is ``weight / sigma``. As in
Paddle's kernel the iteration starts from the stored vectors every call and does not write them
back. The gradient treats ``u`` and ``v`` as constants (the paper's and PyTorch's convention, and
what Paddle's ``nn.utils.spectral_norm`` hook gives): ``(g - u v^T sum(g * W / sigma)) / sigma``.
Paddle 3.3.1's ``spectral_norm`` grad kernel returns ``g * (1 - u v^T sum(W / sigma)) / sigma``
instead, which is not a derivative of its output; this layer does not copy that.
"""

from __future__ import annotations

import math

from ...core.autograd import no_grad
from ...errors import ShapeError
from ...ops.linalg import dot, matmul
from ...ops.products import mv
from .. import initializer as init
from .base import Layer, ParamAttr

__all__ = ["SpectralNorm"]


def weight_matrix(weight, dim: int):
    """``weight`` as ``[shape[dim], -1]``: ``dim`` moved to the front, the other dims flattened."""
    if dim != 0:
        weight = weight.transpose([dim] + [d for d in range(weight.ndim) if d != dim])
    return weight.reshape([weight.shape[0], -1])


def sigma(matrix, u, v):
    """``u . W v``, the spectral norm estimate (differentiable in ``W``)."""
    return dot(u, mv(matrix, v))


class SpectralNorm(Layer):
    """``SpectralNorm(weight_shape, dim=0, power_iters=1, eps=1e-12, dtype='float32')``; calling it on
    a weight of that shape returns the weight divided by its spectral norm."""

    def __init__(self, weight_shape, dim: int = 0, power_iters: int = 1, eps: float = 1e-12, dtype="float32"):
        super().__init__()
        shape = [int(d) for d in weight_shape]
        if math.prod(shape) <= 0:
            raise ShapeError(f"SpectralNorm: weight_shape {shape} has a zero or negative dim")
        if not -len(shape) <= dim < len(shape):
            raise ShapeError(f"SpectralNorm: dim {dim} is out of range for weight_shape {shape}")
        self._dim, self._power_iters, self._eps, self._dtype = dim % len(shape), power_iters, eps, dtype
        self._weight_shape = shape
        h = shape[self._dim]
        self.weight_u = self.create_parameter([h], ParamAttr(), dtype, default_initializer=init.Normal(0.0, 1.0))
        self.weight_u.stop_gradient = True
        self.weight_v = self.create_parameter(
            [math.prod(shape) // h], ParamAttr(), dtype, default_initializer=init.Normal(0.0, 1.0)
        )
        self.weight_v.stop_gradient = True

    def forward(self, x):
        if list(x.shape) != self._weight_shape:
            raise ShapeError(f"SpectralNorm: built for weights of shape {self._weight_shape}, got {list(x.shape)}")
        matrix = weight_matrix(x, self._dim)
        u, v = self.weight_u, self.weight_v
        with no_grad():
            for _ in range(self._power_iters):
                v = matmul(matrix, u, transpose_x=True)
                v = v / ((v * v).sum().sqrt() + self._eps)
                u = mv(matrix, v)
                u = u / ((u * u).sum().sqrt() + self._eps)
        return x / sigma(matrix, u, v)

    def extra_repr(self) -> str:
        return f"weight_shape={self._weight_shape}, dim={self._dim}, power_iters={self._power_iters}"
