"""``kl_divergence(p, q)`` and ``register_kl``: a table of closed forms keyed by the two classes,
dispatched to the most specific registered pair (as Paddle's does), with the Bregman divergence of
the log-normalizer for two members of one exponential family that have no closed form."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import total_ordering

from ..core.autograd import grad
from ..core.tensor import Tensor
from ..errors import DTypeError
from ._base import Distribution, ExponentialFamily, sum_rightmost
from .discrete import Bernoulli, Binomial, Categorical, Geometric, Poisson
from .gamma import Beta, Dirichlet, Exponential, Gamma
from .location_scale import Cauchy, ContinuousBernoulli, Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal, Uniform
from .transformed_distribution import LogNormal

_TABLE: dict[tuple[type, type], Callable] = {}


def register_kl(cls_p: type, cls_q: type) -> Callable:
    """Decorator: ``@register_kl(P, Q)`` makes ``f(p, q)`` the KL divergence of a P and a Q."""
    if not all(isinstance(c, type) and issubclass(c, Distribution) for c in (cls_p, cls_q)):
        raise DTypeError("register_kl: cls_p and cls_q must be subclasses of Distribution")

    def decorator(f: Callable) -> Callable:
        _TABLE[cls_p, cls_q] = f
        return f

    return decorator


@total_ordering
class _Specificity:
    """Orders registered pairs: a pair of subclasses is below (more specific than) its bases."""

    def __init__(self, *classes) -> None:
        self.classes = classes

    def __eq__(self, other) -> bool:
        return self.classes == other.classes

    def __le__(self, other) -> bool:
        for mine, theirs in zip(self.classes, other.classes, strict=True):
            if not issubclass(mine, theirs):
                return False
            if mine is not theirs:
                break
        return True


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) by the closed form registered for their classes."""
    if not isinstance(p, Distribution) or not isinstance(q, Distribution):
        raise DTypeError(f"kl_divergence: p and q must be Distributions, got {type(p).__name__}, {type(q).__name__}")
    matches = [(a, b) for a, b in _TABLE if isinstance(p, a) and isinstance(q, b)]
    if not matches:
        raise NotImplementedError(
            f"kl_divergence: no closed form for ({type(p).__name__}, {type(q).__name__}); add one with register_kl"
        )
    left = min(_Specificity(*m) for m in matches).classes
    right = min(_Specificity(*reversed(m)) for m in matches).classes[::-1]
    if _TABLE[left] is not _TABLE[right]:
        warnings.warn(
            f"Ambiguous kl_divergence({type(p).__name__}, {type(q).__name__}); "
            f"register_kl({left[0].__name__}, {right[1].__name__}) to decide",
            RuntimeWarning,
            stacklevel=2,
        )
    return _TABLE[left](p, q)


def _own_closed_form(p, q):
    return p.kl_divergence(q)


for _cls in (
    Bernoulli, Beta, Binomial, Categorical, Cauchy, ContinuousBernoulli, Dirichlet, Exponential, Gamma, Geometric,
    Laplace, LogNormal, MultivariateNormal, Normal, Poisson, Uniform,
):  # fmt: skip
    register_kl(_cls, _cls)(_own_closed_form)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """Bregman divergence of the log-normalizer, for two members of the same family."""
    if type(p) is not type(q):
        raise NotImplementedError(f"kl_divergence: no closed form for ({type(p).__name__}, {type(q).__name__})")
    natural = [t.detach() for t in p._natural_parameters]
    for t in natural:
        t.stop_gradient = False
    log_norm = p._log_normalizer(*natural)
    grads = grad(log_norm.sum(), natural, create_graph=True)
    kl = q._log_normalizer(*q._natural_parameters) - log_norm
    for p_param, q_param, g in zip(natural, q._natural_parameters, grads, strict=True):
        kl = kl - sum_rightmost((q_param - p_param) * g, len(q.event_shape))
    return kl
