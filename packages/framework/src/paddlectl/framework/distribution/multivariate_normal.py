"""MultivariateNormal, parameterised by its covariance, precision or lower Cholesky factor; every
quantity goes through the factor L (Sigma = L L^T), so log_prob, entropy and rsample differentiate
to all three parameterisations."""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConfigError, ShapeError
from ..ops.creation import eye
from ..ops.diagonal import diagonal
from ..ops.lapack import cholesky, solve
from ..ops.shape import flip, tril
from ._base import Distribution, draw, param, value_like


def _mT(x: Tensor) -> Tensor:
    return x.transpose(list(range(x.ndim - 2)) + [x.ndim - 1, x.ndim - 2])


def _precision_to_scale_tril(precision: Tensor) -> Tensor:
    """L with L L^T = P^-1: the Cholesky factor of the flipped P, flipped and inverted."""
    lf = cholesky(flip(precision, [-2, -1]))
    l_inv = _mT(flip(lf, [-2, -1]))
    return solve(l_inv, eye(precision.shape[-1], dtype=precision.dtype).expand(l_inv.shape))


def _mahalanobis(tril: Tensor, diff: Tensor) -> Tensor:
    """|L^-1 diff|^2 over the last axis, L broadcast against diff's batch."""
    n = diff.shape[-1]
    batch = list(np.broadcast_shapes(tuple(tril.shape[:-2]), tuple(diff.shape[:-1])))
    z = solve(tril.expand(batch + [n, n]), diff.expand(batch + [n]).unsqueeze(-1))
    return z.squeeze(-1).pow(2).sum(-1)


def _half_log_det(tril: Tensor) -> Tensor:
    return diagonal(tril, axis1=-2, axis2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    """``paddle.distribution.MultivariateNormal(loc, covariance_matrix=, precision_matrix=,
    scale_tril=)``: exactly one matrix parameter."""

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None) -> None:
        loc = param(loc, "MultivariateNormal: loc")
        loc = loc.reshape([1]) if loc.ndim < 1 else loc
        given = {"covariance_matrix": covariance_matrix, "precision_matrix": precision_matrix, "scale_tril": scale_tril}
        named = [(k, v) for k, v in given.items() if v is not None]
        if len(named) != 1:
            raise ConfigError("MultivariateNormal: give exactly one of covariance_matrix, precision_matrix, scale_tril")
        kind, matrix = named[0]
        matrix = param(matrix, f"MultivariateNormal: {kind}", loc.dtype)
        if matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] != loc.shape[-1]:
            raise ShapeError(
                f"MultivariateNormal: {kind} must be (..., {loc.shape[-1]}, {loc.shape[-1]}) to match loc {loc.shape}, "
                f"got {matrix.shape}"
            )
        self.dtype = loc.dtype
        batch = list(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        n = loc.shape[-1]
        self.covariance_matrix = self.precision_matrix = self.scale_tril = None
        setattr(self, kind, matrix.expand(batch + [n, n]))
        self.loc = loc.expand(batch + [n])
        try:
            if kind == "scale_tril":
                self._tril = tril(matrix)  # only the lower triangle is read, as Paddle's triangular solve does
            elif kind == "covariance_matrix":
                self._tril = cholesky(matrix)
            else:
                self._tril = _precision_to_scale_tril(matrix)
        except ValueError as exc:  # the Cholesky op's: not positive definite
            raise ConfigError(f"MultivariateNormal: {kind} must be symmetric positive definite ({exc})") from None
        super().__init__(tuple(batch), (n,))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self._tril.pow(2).sum(-1).expand(list(self.batch_shape + self.event_shape))

    def sample(self, shape=()) -> Tensor:
        return self.rsample(shape).detach()

    def rsample(self, shape=()) -> Tensor:
        eps = draw(lambda g, s: g.standard_normal(s), self._extend_shape(shape), self.dtype)
        return self.loc + (self._tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value) -> Tensor:
        diff = value_like(value, self.loc) - self.loc
        m = _mahalanobis(self._tril, diff)
        return -0.5 * (self.event_shape[0] * math.log(2 * math.pi) + m) - _half_log_det(self._tril)

    def entropy(self) -> Tensor:
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._tril)
        return h.expand(list(self.batch_shape)) if self.batch_shape else h

    def kl_divergence(self, other: MultivariateNormal) -> Tensor:
        if self.event_shape != other.event_shape:
            raise ShapeError(f"MultivariateNormal KL: event shapes differ, {self.event_shape} vs {other.event_shape}")
        cov_1 = self._tril @ _mT(self._tril)
        cov_2 = other._tril @ _mT(other._tril)
        expectation = diagonal(solve(cov_2, cov_1), axis1=-2, axis2=-1).sum(-1)
        expectation = expectation + _mahalanobis(other._tril, self.loc - other.loc)
        return _half_log_det(other._tril) - _half_log_det(self._tril) + 0.5 * (expectation - self.event_shape[0])
