"""Embedding and likelihood losses (ops/composite_losses.py) and their layers against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


SIGNS = np.array([1.0, -1.0, 1.0, -1.0], "float32")

CASES = [
    (lambda F, a, b: F.cosine_embedding_loss(a, b, SIGNS_T(F)), (4, 3)),
    (lambda F, a, b: F.cosine_embedding_loss(a, b, SIGNS_T(F), margin=0.2, reduction="sum"), (4, 3)),
    (lambda F, a, b: F.hinge_embedding_loss(a, SIGNS_T(F).unsqueeze(-1).expand([4, 3]), margin=0.5), (4, 3)),
    (lambda F, a, b: F.triplet_margin_loss(a, b, a * 0.5 + b * 0.1, margin=1.5), (4, 3)),
    (lambda F, a, b: F.triplet_margin_loss(a, b, b * 0.2, p=1.0, swap=True, reduction="none"), (4, 3)),
    (lambda F, a, b: F.poisson_nll_loss(a, b.abs() * 3), (4, 3)),
    (
        lambda F, a, b: F.poisson_nll_loss(a.abs() + 0.1, b.abs() * 3, log_input=False, full=True, reduction="sum"),
        (4, 3),
    ),
    (lambda F, a, b: F.gaussian_nll_loss(a, b, (a * b).abs()), (4, 3)),
    (lambda F, a, b: F.gaussian_nll_loss(a, b, (a * b).abs()[:, 0], full=True, reduction="none"), (4, 3)),
    (lambda F, a, b: F.multi_label_soft_margin_loss(a, (b > 0).astype("float32")), (4, 3)),
    (lambda F, a, b: F.multi_label_soft_margin_loss(a, (b > 0).astype("float32"), b.abs(), reduction="none"), (4, 3)),
]


def SIGNS_T(F):  # noqa: N802 - a constant label tensor for the framework F belongs to
    import sys

    return sys.modules[F.__name__.split(".nn")[0]].to_tensor(SIGNS)


@pytest.mark.parametrize("fn,shape", CASES)
def test_losses_match_paddle(real_paddle, fn, shape):
    compare(real_paddle, lambda P: lambda a, b: fn(P.nn.functional, a, b), r(*shape), r(*shape), rtol=1e-5, atol=1e-5)


LAYERS = [
    (lambda nn: nn.CosineEmbeddingLoss(margin=0.1), 3),
    (lambda nn: nn.HingeEmbeddingLoss(0.5, "sum"), 2),
    (lambda nn: nn.TripletMarginLoss(margin=0.5, swap=True), 3),
    (lambda nn: nn.PoissonNLLLoss(full=True), 2),
    (lambda nn: nn.GaussianNLLLoss(reduction="sum"), 3),
    (lambda nn: nn.MultiLabelSoftMarginLoss(), 2),
]


@pytest.mark.parametrize("build,n", LAYERS)
def test_loss_layers_match_paddle(real_paddle, build, n):
    a, b = r(4, 3), r(4, 3)

    def build_fn(P):
        layer = build(P.nn)

        def fn(x, y):
            if n == 2:
                label = (y > 0).astype("float32") if isinstance(layer, P.nn.MultiLabelSoftMarginLoss) else y.abs() * 2
                if isinstance(layer, P.nn.HingeEmbeddingLoss):
                    label = P.to_tensor(np.sign(b))
                return layer(x, label)
            if isinstance(layer, P.nn.CosineEmbeddingLoss):
                return layer(x, y, P.to_tensor(SIGNS))
            if isinstance(layer, P.nn.GaussianNLLLoss):
                return layer(x, y, (x * y).abs())
            return layer(x, y, y * 0.3)

        return fn

    compare(real_paddle, build_fn, a, b, rtol=1e-5, atol=1e-5)


def test_errors_are_typed():
    F = ours.nn.functional
    with pytest.raises(ShapeError, match="1-D"):
        F.cosine_embedding_loss(ours.rand([2, 3]), ours.rand([2, 3]), ours.ones([2, 1]))
    with pytest.raises(ValueError, match="margin"):
        F.triplet_margin_loss(ours.rand([2, 3]), ours.rand([2, 3]), ours.rand([2, 3]), margin=-1.0)
    with pytest.raises(ShapeError, match="variance"):
        F.gaussian_nll_loss(ours.rand([2, 3]), ours.rand([2, 3]), ours.rand([3, 2]))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(ours.rand([2, 3]), ours.rand([2, 3]), -ours.rand([2, 3]) - 1)
    with pytest.raises(ShapeError, match="same shape"):
        F.poisson_nll_loss(ours.rand([2, 3]), ours.rand([3, 2]))
    with pytest.raises(ValueError, match="reduction"):
        F.hinge_embedding_loss(ours.rand([2]), ours.ones([2]), reduction="avg")
