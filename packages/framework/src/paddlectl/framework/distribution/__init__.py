"""``paddle.distribution``: Paddle 3.3.1's probability distributions, transforms and KL divergences,
computed through framework ops so log_prob, entropy, KL and rsample differentiate (and trace);
draws come from the framework's generator, so ``paddle.seed`` repeats them."""

from . import transform
from ._base import Distribution, ExponentialFamily
from .discrete import Bernoulli, Binomial, Categorical, Geometric, Multinomial, Poisson
from .gamma import Beta, Chi2, Dirichlet, Exponential, Gamma
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .lkj_cholesky import LKJCholesky
from .location_scale import Cauchy, ContinuousBernoulli, Laplace, StudentT
from .multivariate_normal import MultivariateNormal
from .normal import Normal, Uniform
from .transform import (
    AbsTransform,
    AffineTransform,
    ChainTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from .transformed_distribution import LogNormal, TransformedDistribution

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "Independent", "LKJCholesky", "Laplace",
    "LogNormal", "Multinomial", "MultivariateNormal", "Normal", "Poisson", "StudentT", "TransformedDistribution",
    "Uniform", "kl_divergence", "register_kl", *transform.__all__,
]  # fmt: skip
