"""``paddle.nn.utils.spectral_norm(layer)``: the layer's weight is divided by its spectral norm before
every forward (a forward pre-hook), as Paddle's hook does it.

The parameter ``weight`` becomes ``weight_orig``; ``weight_u`` and ``weight_v`` are buffers drawn as
Paddle draws them (a parameter of each size created, then filled from N(0, 1), then normalised), and
``weight`` is a plain attribute recomputed by the hook. In training mode each forward runs
``n_power_iterations`` rounds that update the buffers in place (``v = normalize(W^T u)``,
``u = normalize(W v)``, ``normalize`` dividing by ``max(|x|, eps)``); in eval mode the stored
vectors are used as they are. The weight's gradient flows through ``weight_orig / sigma`` with
``u``, ``v`` as constants.
"""

from __future__ import annotations

from ...core.autograd import no_grad
from ...errors import ConfigError
from ...ops.creation import normal
from ...ops.distance import normalize
from ...ops.linalg import matmul
from ...ops.products import mv
from ...ops.tensor_api import assign
from ..layer.common import Linear
from ..layer.conv import Conv2DTranspose
from ..layer.spectral_norm import sigma, weight_matrix


class SpectralNormHook:
    """The forward pre-hook: sets ``layer.<name>`` to ``<name>_orig / sigma`` before the forward."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, layer, do_power_iteration: bool):
        weight = getattr(layer, self.name + "_orig")
        u, v = getattr(layer, self.name + "_u"), getattr(layer, self.name + "_v")
        matrix = weight_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    assign(normalize(matmul(matrix, u, transpose_x=True), axis=0, epsilon=self.eps), v)
                    assign(normalize(mv(matrix, v), axis=0, epsilon=self.eps), u)
                u, v = u.clone(), v.clone()
        return weight / sigma(matrix, u, v)

    def __call__(self, layer, inputs) -> None:
        setattr(layer, self.name, self.compute_weight(layer, do_power_iteration=layer.training))


def spectral_norm(layer, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim=None):
    """Apply spectral normalisation to ``layer.<name>`` (``dim`` defaults to 1 for Linear and the
    transposed convolutions, whose weights hold the output features in dim 1, else 0); returns
    the layer."""
    if n_power_iterations <= 0:
        raise ConfigError(f"spectral_norm: n_power_iterations must be positive, got {n_power_iterations}")
    if any(isinstance(h, SpectralNormHook) and h.name == name for h in layer._forward_pre_hooks.values()):
        raise ConfigError(f"spectral_norm: the parameter {name!r} already has a spectral_norm hook")
    weight = layer._parameters.get(name)
    if weight is None:
        raise ConfigError(f"spectral_norm: {type(layer).__name__} has no parameter named {name!r}")
    if dim is None:
        dim = 1 if isinstance(layer, Linear | Conv2DTranspose) else 0
    hook = SpectralNormHook(name, n_power_iterations, dim, eps)
    with no_grad():
        h, w = weight_matrix(weight, dim).shape
        u = normalize(_drawn(layer, h), axis=0, epsilon=eps)
        v = normalize(_drawn(layer, w), axis=0, epsilon=eps)
    del layer._parameters[name]
    layer.add_parameter(name + "_orig", weight)
    setattr(layer, name, weight * 1.0)  # a plain attribute until the first forward recomputes it
    layer.register_buffer(name + "_u", u)
    layer.register_buffer(name + "_v", v)
    layer.register_forward_pre_hook(hook)
    return layer


def _drawn(layer, n: int):
    """A [n] vector from N(0, 1), after the parameter Paddle creates first (whose initialiser draws
    from the same stream, so the draws stay in step with Paddle's)."""
    return normal(0.0, 1.0, shape=layer.create_parameter([n]).shape)
