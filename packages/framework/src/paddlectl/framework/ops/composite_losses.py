"""The losses ``paddle.nn.functional`` composes from existing ops, as Paddle composes them (no
kernels of their own): label smoothing, focal, ranking, margin, embedding and likelihood losses."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample
from ..core.shapes import same_as_first
from ..errors import ShapeError
from . import elementwise as ew
from ._util import constant
from .activation import relu, sigmoid
from .loss_checks import check_reduction, reduce_loss
from .pointwise_losses import binary_cross_entropy_with_logits


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """``(1 - epsilon) * label + epsilon * prior`` (uniform ``1/num_classes`` without ``prior_dist``);
    as in Paddle, no gradient flows into ``prior_dist``."""
    if not 0 <= epsilon <= 1:
        raise ValueError(f"label_smooth: epsilon must lie in [0, 1], got {epsilon}")
    smoothed = ew.scale(label, 1.0 - float(epsilon))
    if prior_dist is None:
        return smoothed + float(epsilon) / label.shape[-1]
    return smoothed + ew.scale(prior_dist.detach(), float(epsilon))


def sigmoid_focal_loss(logit, label, normalizer=None, alpha=0.25, gamma=2.0, reduction="sum", name=None):
    """Focal loss on logits: ``alpha_t * (1 - p_t)^gamma * BCE(logit, label)``, divided by ``normalizer``."""
    check_reduction("sigmoid_focal_loss", reduction)
    if logit.shape != label.shape:
        raise ShapeError(f"sigmoid_focal_loss: logit{logit.shape} and label{label.shape} must have the same shape")
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    pred = sigmoid(logit)
    p_t = pred * label + (1.0 - pred) * (1.0 - label)
    alpha_t = label * float(alpha) + (1.0 - label) * (1.0 - float(alpha))
    loss = alpha_t * loss * ew.pow(1.0 - p_t, float(gamma))
    if normalizer is not None:
        loss = loss / normalizer
    return reduce_loss(loss, reduction)


def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean", name=None):  # noqa: A002
    """``relu(-label * (input - other) + margin)``."""
    check_reduction("margin_ranking_loss", reduction)
    out = (other - input) * label
    if margin != 0.0:
        out = out + float(margin)
    return reduce_loss(relu(out), reduction)


FUNCTIONAL = ["label_smooth", "sigmoid_focal_loss", "margin_ranking_loss"]


def square_error_cost(input, label):  # noqa: A002
    """Elementwise ``(input - label)^2`` (no reduction)."""
    diff = input - label
    return diff * diff


def log_loss(input, label, epsilon=1e-4, name=None):  # noqa: A002
    """Elementwise ``-label*log(input+eps) - (1-label)*log(1-input+eps)`` on probabilities."""
    log = ew.UNARY["log"]
    return -label * log(input + float(epsilon)) - (1.0 - label) * log(1.0 - input + float(epsilon))


def soft_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """``log(1 + exp(-label * input))`` with labels in {-1, 1}."""
    check_reduction("soft_margin_loss", reduction)
    return reduce_loss(ew.UNARY["log1p"](ew.UNARY["exp"](-label * input)), reduction)


def _nonnegative_forward(ctx, x, what):
    if np.any(x < 0):
        raise ValueError(f"{what} has negative entries")
    return x


nonnegative_op = OpDef(
    "check_nonnegative",
    _nonnegative_forward,
    None,
    same_as_first,
    OPAQUE,
    samples=lambda rng: [Sample((rng.uniform(0.0, 2.0, (3, 4)),), {"what": "variance"})],
)
"""Passes ``x`` through after checking it has no negative entry, each time the op runs (eager or a
traced program), where a Python-side check would only see the example input."""


FUNCTIONAL += ["square_error_cost", "log_loss", "soft_margin_loss"]


# ----- embedding and likelihood losses (Paddle's compositions) ---------------------------------


def _zeros_like(t):
    return constant(0, t.dtype)


def cosine_embedding_loss(input1, input2, label, margin=0, reduction="mean", name=None):
    """``1 - cos`` where label is 1, ``max(0, cos - margin)`` where it is -1."""
    check_reduction("cosine_embedding_loss", reduction)
    if label.ndim != 1 or input1.shape != input2.shape or input1.ndim > 2:
        raise ShapeError(
            f"cosine_embedding_loss: inputs must share a 1-D or 2-D shape and label be 1-D; got input1{input1.shape}, "
            f"input2{input2.shape}, label{label.shape}"
        )
    from . import reduce

    square = ew.UNARY["square"]
    cos = reduce.sum(input1 * input2, -1) / ew.UNARY["sqrt"](
        (reduce.sum(square(input1), -1) + 10e-12) * (reduce.sum(square(input2), -1) + 10e-12)
    )
    zero = _zeros_like(cos)
    out = ew.where(label == 1, 1 - cos, zero) + ew.where(label == -1, ew.clip(cos - margin, 0.0), zero)
    return reduce_loss(out, reduction)


def hinge_embedding_loss(input, label, margin=1.0, reduction="mean", name=None):  # noqa: A002
    """``input`` where label is 1, ``max(0, margin - input)`` where it is -1."""
    check_reduction("hinge_embedding_loss", reduction)
    zero = _zeros_like(input)
    loss = ew.where(label == 1.0, input, zero) + ew.where(label == -1.0, relu(float(margin) - input), zero)
    return reduce_loss(loss, reduction)


def triplet_margin_loss(input, positive, negative, margin=1.0, p=2, epsilon=1e-6, swap=False, reduction="mean",
                        name=None):  # fmt: skip  # noqa: A002
    """``max(0, d(input, positive) - d(input, negative) + margin)`` with pairwise p-distances."""
    from .distance import pairwise_distance

    check_reduction("triplet_margin_loss", reduction)
    if margin < 0:
        raise ValueError(f"triplet_margin_loss: margin must be >= 0, got {margin}")
    if not input.shape == positive.shape == negative.shape:
        raise ShapeError(
            f"triplet_margin_loss: input{input.shape}, positive{positive.shape} and negative{negative.shape} must match"
        )
    pos = pairwise_distance(input, positive, p, epsilon)
    neg = pairwise_distance(input, negative, p, epsilon)
    if swap:
        neg = ew.BINARY["minimum"](neg, pairwise_distance(positive, negative, p, epsilon))
    return reduce_loss(ew.clip(pos - neg + float(margin), 0.0), reduction)


def poisson_nll_loss(input, label, log_input=True, full=False, epsilon=1e-8, reduction="mean", name=None):  # noqa: A002
    """Poisson negative log-likelihood; ``full`` adds Stirling's term where label > 1."""
    check_reduction("poisson_nll_loss", reduction)
    if epsilon <= 0:
        raise ValueError(f"poisson_nll_loss: epsilon must be > 0, got {epsilon}")
    if input.shape != label.shape:
        raise ShapeError(f"poisson_nll_loss: input{input.shape} and label{label.shape} must have the same shape")
    log = ew.UNARY["log"]
    if log_input:
        loss = ew.UNARY["exp"](input) - label * input
    else:
        loss = input - label * log(input + float(epsilon))
    if full:
        stirling = label * log(label) - label + 0.5 * log(label * (2 * np.pi))
        loss = loss + ew.where(label > 1, stirling, _zeros_like(stirling))
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, label, variance, full=False, epsilon=1e-6, reduction="mean", name=None):  # noqa: A002
    """``0.5 * (log(var) + (input - label)^2 / var)``; the variance is clamped to ``epsilon`` outside the
    graph, as Paddle does, so no gradient reaches ``variance``."""
    from .shape import unsqueeze

    check_reduction("gaussian_nll_loss", reduction)
    if variance.shape != input.shape:
        if input.shape[:-1] == variance.shape:
            variance = unsqueeze(variance, -1)
        elif not (input.shape[:-1] == variance.shape[:-1] and variance.shape[-1] == 1):
            raise ShapeError(f"gaussian_nll_loss: variance{variance.shape} does not fit input{input.shape}")
    var = ew.clip(nonnegative_op(variance.detach(), what="gaussian_nll_loss: variance"), float(epsilon))
    diff = input - label
    loss = (ew.UNARY["log"](var) + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * float(np.log(2 * np.pi))
    return reduce_loss(loss, reduction)


def multi_label_soft_margin_loss(input, label, weight=None, reduction="mean", name=None):  # noqa: A002
    from . import reduce
    from .activation import log_sigmoid

    check_reduction("multi_label_soft_margin_loss", reduction)
    if input.shape != label.shape:
        raise ShapeError(f"multi_label_soft_margin_loss: input{input.shape} and label{label.shape} must match")
    loss = -(label * log_sigmoid(input) + (1.0 - label) * log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(reduce.mean(loss, -1), reduction)


FUNCTIONAL += [
    "cosine_embedding_loss", "hinge_embedding_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
    "multi_label_soft_margin_loss",
]  # fmt: skip
