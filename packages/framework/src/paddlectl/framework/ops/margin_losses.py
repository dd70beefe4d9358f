"""Class-margin, overlap and metric-learning losses ``paddle.nn.functional`` composes from existing
ops, as Paddle composes them (no kernels of their own): multi-class and multi-label hinge losses,
the dice loss, the N-pair loss and the triplet loss over any distance function."""

from __future__ import annotations

from ..errors import ShapeError
from . import elementwise as ew
from . import reduce
from .loss_checks import check_float, check_int, check_reduction, reduce_loss


def multi_margin_loss(input, label, p=1, margin=1.0, weight=None, reduction="mean", name=None):  # noqa: A002
    """Multi-class hinge ``mean_i(w[y] * max(0, margin - x[y] + x[i])^p)``, the ``i == y`` term
    (always ``margin^p``) subtracted afterwards, as Paddle does."""
    from .scatter_api import index_sample
    from .shape import reshape

    check_reduction("multi_margin_loss", reduction)
    check_float("multi_margin_loss", "input", input)
    check_int("multi_margin_loss", "label", label, "cast it with .astype('int64')")
    if input.ndim != 2 or input.shape[0] != label.shape[0]:
        raise ShapeError(
            f"multi_margin_loss: input must be [N, C] and label [N], got input{input.shape} and label{label.shape}"
        )
    label = reshape(label, [-1, 1])
    hinge = ew.pow(ew.clip(float(margin) - index_sample(input, label) + input, 0.0), p)
    self_term = float(margin) ** p / input.shape[1]
    if weight is None:
        return reduce_loss(reduce.mean(hinge, 1) - self_term, reduction)
    if weight.shape != [input.shape[1]]:
        raise ShapeError(f"multi_margin_loss: weight must be [{input.shape[1]}] (one per class), got {weight.shape}")
    from .index import gather

    w = reshape(gather(weight, label, axis=0), [-1, 1])
    return reduce_loss(reduce.mean(w * hinge, 1) - reshape(w * self_term, [-1]), reduction)


def multi_label_margin_loss(input, label, reduction="mean", name=None):  # noqa: A002
    """``sum_{j target, i not target} max(0, 1 - x[y_j] + x[i]) / C``; a row's targets are its labels
    up to the first -1. Built from one-hot masks instead of Paddle's value-sized index lists, so the
    shapes do not depend on the labels."""
    from .index import one_hot
    from .scan import cumprod
    from .shape import unsqueeze

    check_reduction("multi_label_margin_loss", reduction)
    check_float("multi_label_margin_loss", "input", input)
    check_int("multi_label_margin_loss", "label", label, "cast it with .astype('int64')")
    if input.ndim != 2 or label.shape != input.shape:
        raise ShapeError(
            f"multi_label_margin_loss: input and label must both be [N, C], got input{input.shape}, label{label.shape}"
        )
    classes = input.shape[1]
    valid = cumprod((label != -1).astype(input.dtype), dim=1)  # [N, J]: targets before the first -1
    targets = one_hot(ew.clip(label, 0), classes).astype(input.dtype) * unsqueeze(valid, -1)  # [N, J, C]
    is_target = reduce.max(targets, 1)  # [N, C]
    target_score = reduce.sum(targets * unsqueeze(input, 1), -1)  # [N, J]
    hinge = ew.clip(1.0 - unsqueeze(target_score, -1) + unsqueeze(input, 1), 0.0)  # [N, J, C]
    hinge = hinge * unsqueeze(1.0 - is_target, 1) * unsqueeze(valid, -1)
    return reduce_loss(reduce.sum(hinge, [1, 2]) / float(classes), reduction)


def dice_loss(input, label, epsilon=1e-5, name=None):  # noqa: A002
    """``mean(1 - 2 |X & Y| / (|X| + |Y| + epsilon))`` over the batch, ``label`` holding class ids
    in a trailing dimension of 1."""
    from .index import one_hot
    from .shape import squeeze

    check_float("dice_loss", "input", input)
    check_int("dice_loss", "label", label, "cast it with .astype('int64')")
    if input.ndim < 2 or label.ndim != input.ndim or label.shape[-1] != 1 or label.shape[:-1] != input.shape[:-1]:
        raise ShapeError(
            f"dice_loss: label must be input's shape with a last dimension of 1, got input{input.shape}, "
            f"label{label.shape}"
        )
    onehot = one_hot(squeeze(label, [-1]), input.shape[-1]).astype(input.dtype)
    axes = list(range(1, input.ndim))
    overlap = reduce.sum(input * onehot, axes)
    denominator = reduce.sum(input, axes) + reduce.sum(onehot, axes)
    return reduce.mean(1 - overlap * 2 / (denominator + float(epsilon)))


def npair_loss(anchor, positive, labels, l2_reg=0.002):
    """Soft-label cross entropy of the anchor-positive similarity matrix (targets: rows of equal
    label, normalised) plus ``l2_reg / 4`` times the embeddings' mean squared norms."""
    from .cross_entropy import softmax_with_cross_entropy
    from .linalg import matmul
    from .shape import reshape, tile, transpose

    check_float("npair_loss", "anchor", anchor)
    check_float("npair_loss", "positive", positive)
    if anchor.ndim != 2 or positive.shape != anchor.shape or labels.shape[0] != anchor.shape[0]:
        raise ShapeError(
            f"npair_loss: anchor and positive must be [N, D] and labels [N], got anchor{anchor.shape}, "
            f"positive{positive.shape}, labels{labels.shape}"
        )
    n = labels.shape[0]
    tiled = tile(reshape(labels, [n, 1]), [1, n])
    same = (tiled == transpose(tiled, [1, 0])).astype("float32")
    same = same / reduce.sum(same, 1, keepdim=True)
    square = ew.UNARY["square"]
    l2 = reduce.mean(reduce.sum(square(anchor), 1)) + reduce.mean(reduce.sum(square(positive), 1))
    similarity = matmul(anchor, positive, transpose_y=True)
    ce = softmax_with_cross_entropy(similarity, same, soft_label=True)
    return l2 * 0.25 * float(l2_reg) + reduce.mean(reduce.sum(same * ce, 0))


def triplet_margin_with_distance_loss(input, positive, negative, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean", name=None):  # fmt: skip  # noqa: A002
    """``max(0, d(input, positive) - d(input, negative) + margin)``, ``d`` any callable on two
    tensors (the 2-norm pairwise distance by default)."""
    from .distance import pairwise_distance

    check_reduction("triplet_margin_with_distance_loss", reduction)
    if margin < 0:
        raise ValueError(f"triplet_margin_with_distance_loss: margin must be >= 0, got {margin}")
    if not input.shape == positive.shape == negative.shape:
        raise ShapeError(
            f"triplet_margin_with_distance_loss: input{input.shape}, positive{positive.shape} and "
            f"negative{negative.shape} must match"
        )
    distance = distance_function if distance_function is not None else pairwise_distance
    pos = distance(input, positive)
    neg = distance(input, negative)
    if swap:
        neg = ew.BINARY["minimum"](neg, distance(positive, negative))
    return reduce_loss(ew.clip(pos - neg + float(margin), 0.0), reduction)


FUNCTIONAL = [
    "multi_margin_loss", "multi_label_margin_loss", "dice_loss", "npair_loss", "triplet_margin_with_distance_loss",
]  # fmt: skip
