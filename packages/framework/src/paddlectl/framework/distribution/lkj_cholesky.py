"""``paddle.distribution.LKJCholesky``: the LKJ distribution over Cholesky factors of correlation
matrices. ``log_prob`` is ops (differentiable in the concentration); ``sample`` runs the onion or
C-vine construction on NumPy draws from the framework's generator.

Paddle 3.3.1's samplers do not draw LKJ: its onion method gives row i a radius from Beta(i - 1/2, .)
instead of Beta(i/2, .), and its C-vine is off too (off-diagonal correlation variances 0.214 and
0.177 for dim 3, concentration 2, where LKJ's marginal gives 1/6). Ours match the marginal
(tests/test_distribution.py); log_prob equals Paddle's."""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError
from ..ops import random as _random
from ..ops._util import constant
from ..ops.creation import arange
from ..ops.diagonal import diagonal
from ..ops.special import lgamma
from ._base import Distribution, params, positive, sample_shape_of, value_like


class LKJCholesky(Distribution):
    """``LKJCholesky(dim, concentration, sample_method)``: density proportional to
    ``prod_i L_ii ** (dim - i + 2 (concentration - 1))`` over lower-triangular L with unit rows."""

    def __init__(self, dim: int = 2, concentration=1.0, sample_method: str = "onion") -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 2:
            raise ConfigError(f"LKJCholesky: dim must be an int >= 2, got {dim!r}")
        if sample_method not in ("onion", "cvine"):
            raise ConfigError(f"LKJCholesky: sample_method must be 'onion' or 'cvine', got {sample_method!r}")
        (self.concentration,) = params((concentration, "LKJCholesky: concentration"))
        positive("LKJCholesky: concentration", self.concentration)
        self.dim, self.sample_method, self.dtype = dim, sample_method, self.concentration.dtype
        super().__init__(tuple(self.concentration.shape), (dim, dim))

    def sample(self, sample_shape=()) -> Tensor:
        shape = sample_shape_of(sample_shape) + self.batch_shape
        conc = np.broadcast_to(self.concentration.numpy().astype(np.float64), shape)[..., None]
        marginal = conc + 0.5 * (self.dim - 2)
        draw = self._onion if self.sample_method == "onion" else self._cvine
        return constant(draw(_random.generator(), marginal, shape).astype(self.dtype))

    def _onion(self, g: np.random.Generator, marginal: np.ndarray, shape: tuple) -> np.ndarray:
        """Row i of L: a uniform direction in its first i coordinates scaled by sqrt(Beta(i/2, ...))."""
        offset = np.concatenate([[0.0], np.arange(self.dim - 1)])
        y = g.beta(0.5 * offset + 0.5, marginal - 0.5 * offset)[..., None]
        u = np.tril(g.standard_normal(shape + (self.dim, self.dim)), -1)
        norms = np.linalg.norm(u, axis=-1, keepdims=True)
        u = np.divide(u, norms, out=np.zeros_like(u), where=norms > 0)
        w = np.sqrt(y) * u
        diag = np.sqrt(np.clip(1 - (w**2).sum(-1), np.finfo(np.float64).tiny, None))
        return w + diag[..., None] * np.eye(self.dim)

    def _cvine(self, g: np.random.Generator, marginal: np.ndarray, shape: tuple) -> np.ndarray:
        """Partial correlations 2 Beta(b_j, b_j) - 1 below the diagonal, b_j = marginal - j/2, to L."""
        rows, cols = np.tril_indices(self.dim, -1)
        b = marginal - 0.5 * cols
        tiny = np.finfo(np.float64).tiny
        r = np.zeros(shape + (self.dim, self.dim))
        r[..., rows, cols] = np.clip(2 * g.beta(b, b) - 1, -1 + tiny, 1 - tiny)
        shifted = np.ones_like(r)
        shifted[..., 1:] = np.cumprod(np.sqrt(1 - r**2), axis=-1)[..., :-1]
        return (r + np.eye(self.dim)) * shifted

    def log_prob(self, value) -> Tensor:
        value = value_like(value, self.concentration)
        diag = diagonal(value, axis1=-2, axis2=-1)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - arange(2, self.dim + 1, dtype=self.dtype)
        unnormalised = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        j = arange(1, dm1 + 1, dtype=self.dtype)
        mvlgamma = dm1 * (dm1 - 1) / 4 * math.log(math.pi) + lgamma((alpha - 0.5).unsqueeze(-1) + (1 - j) / 2).sum(-1)
        return unnormalised - (0.5 * dm1 * math.log(math.pi) + mvlgamma - lgamma(alpha) * dm1)
