"""More losses for ``paddle.nn.functional``, composed from existing ops as Paddle composes them:
label_smooth, sigmoid_focal_loss, margin_ranking_loss."""

from __future__ import annotations

from ..errors import ShapeError
from . import elementwise as ew
from .activation import relu, sigmoid
from .loss import _check_reduction, _reduce, binary_cross_entropy_with_logits


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
    _check_reduction("sigmoid_focal_loss", reduction)
    if logit.shape != label.shape:
        raise ShapeError(f"sigmoid_focal_loss: logit{logit.shape} and label{label.shape} must have the same shape")
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    pred = sigmoid(logit)
    p_t = pred * label + (1.0 - pred) * (1.0 - label)
    alpha_t = label * float(alpha) + (1.0 - label) * (1.0 - float(alpha))
    loss = alpha_t * loss * ew.pow(1.0 - p_t, float(gamma))
    if normalizer is not None:
        loss = loss / normalizer
    return _reduce(loss, reduction)


def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean", name=None):  # noqa: A002
    """``relu(-label * (input - other) + margin)``."""
    _check_reduction("margin_ranking_loss", reduction)
    out = (other - input) * label
    if margin != 0.0:
        out = out + float(margin)
    return _reduce(relu(out), reduction)


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
    _check_reduction("soft_margin_loss", reduction)
    return _reduce(ew.UNARY["log1p"](ew.UNARY["exp"](-label * input)), reduction)


def sequence_mask(x, maxlen=None, dtype="int64", name=None):
    """``mask[..., j] = j < x[...]`` for lengths ``x``, ``maxlen`` columns (default ``max(x)``)."""
    import numpy as np

    from ..core.dtype import convert_dtype
    from ..core.tensor import Tensor

    lengths = x._data
    n = int(lengths.max()) if maxlen is None and lengths.size else int(maxlen or 0)
    return Tensor._wrap((np.arange(n) < lengths[..., None]).astype(convert_dtype(dtype)))


FUNCTIONAL += ["square_error_cost", "log_loss", "soft_margin_loss", "sequence_mask"]
