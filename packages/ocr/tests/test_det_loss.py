"""DBLoss on tiny cases computed by hand in NumPy, its gradients, and the same formula in Paddle."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, ShapeError
from paddlectl.ocr.det.head import step_function
from paddlectl.ocr.det.loss import BalanceLoss, DBLoss

RNG = np.random.default_rng(0)
SHRINK = np.zeros((1, 4, 4))
SHRINK[0, 1:3, 1:3] = 1  # 4 positives, 12 negatives
SHRINK_MASK = np.ones((1, 4, 4))
SHRINK_MASK[0, 0, 0] = 0  # one ignored negative
THRESH_MAP = RNG.uniform(0.3, 0.7, (1, 4, 4))
THRESH_MASK = (RNG.uniform(size=(1, 4, 4)) > 0.3).astype(float)
MAPS = RNG.uniform(0.05, 0.95, (1, 3, 4, 4))
LABEL = np.stack([THRESH_MAP, THRESH_MASK, SHRINK, SHRINK_MASK], axis=1)


def _numpy_db_loss(maps, label, alpha=5.0, beta=10.0, ratio=3.0, eps=1e-6):
    p, t, b = maps[:, 0], maps[:, 1], maps[:, 2]
    tmap, tmask, gt, mask = label[:, 0], label[:, 1], label[:, 2], label[:, 3]
    bce = -(gt * np.log(p) + (1 - gt) * np.log(1 - p))
    pos, neg = gt * mask, (1 - gt) * mask
    n_pos = int(pos.sum())
    n_neg = int(min(neg.sum(), n_pos * ratio))
    hardest = np.sort((neg * bce).ravel())[::-1][:n_neg]
    shrink = ((pos * bce).sum() + hardest.sum()) / (n_pos + n_neg + eps)
    l1 = (np.abs(t - tmap) * tmask).sum() / (tmask.sum() + eps)
    dice = 1 - 2 * (b * gt * mask).sum() / ((b * mask).sum() + (gt * mask).sum() + eps)
    return alpha * shrink + beta * l1 + dice


def test_db_loss_matches_numpy_by_hand():
    loss = DBLoss(main_loss_type="BCELoss")(paddle.to_tensor(MAPS), paddle.to_tensor(LABEL))
    assert float(loss) == pytest.approx(_numpy_db_loss(MAPS, LABEL), rel=1e-10)


def test_ohem_keeps_only_the_hardest_negatives():
    # 1 positive -> 3 negatives count; the 3 worst negatives are the ones predicted 0.9.
    gt = np.zeros((1, 2, 4))
    gt[0, 0, 0] = 1
    pred = np.full((1, 2, 4), 0.1)
    pred[0, 1, :3] = 0.9
    pred[0, 0, 0] = 0.5
    got = BalanceLoss(main_loss_type="BCELoss")(*(paddle.to_tensor(a) for a in (pred, gt, np.ones_like(gt))))
    expected = (-np.log(0.5) + 3 * -np.log(0.1)) / (1 + 3 + 1e-6)
    assert float(got) == pytest.approx(expected, rel=1e-10)


def test_paddleocr_default_dice_main_loss_is_dice_of_the_map():
    """PaddleOCR's default main_loss_type (DiceLoss) makes the balancing a no-op: the result is the Dice loss."""
    p, gt, mask = MAPS[:, 0], SHRINK, SHRINK_MASK
    dice = 1 - 2 * (p * gt * mask).sum() / ((p * mask).sum() + (gt * mask).sum() + 1e-6)
    got = BalanceLoss()(*(paddle.to_tensor(a) for a in (p, gt, mask)))
    assert float(got) == pytest.approx(dice, rel=1e-5)


def test_gradients_reach_all_three_maps_and_match_finite_differences():
    maps = paddle.to_tensor(MAPS, stop_gradient=False)
    loss = DBLoss(main_loss_type="BCELoss")(maps, paddle.to_tensor(LABEL))
    loss.backward()
    grad = maps.grad.numpy()
    for c in range(3):
        assert np.abs(grad[0, c]).sum() > 0
    for index in [(0, 0, 1, 1), (0, 1, 2, 3), (0, 2, 1, 2), (0, 0, 3, 3)]:
        up, down = MAPS.copy(), MAPS.copy()
        up[index] += 1e-6
        down[index] -= 1e-6
        numeric = (_numpy_db_loss(up, LABEL) - _numpy_db_loss(down, LABEL)) / 2e-6
        assert grad[index] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_binarisation_step_gradient_against_numpy():
    k = 50.0
    p_np, t_np = RNG.uniform(0.2, 0.8, (3, 5)), RNG.uniform(0.3, 0.7, (3, 5))
    p, t = paddle.to_tensor(p_np, stop_gradient=False), paddle.to_tensor(t_np, stop_gradient=False)
    out = step_function(p, t, k)
    s = 1 / (1 + np.exp(-k * (p_np - t_np)))
    np.testing.assert_allclose(out.numpy(), s, rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), k * s * (1 - s), rtol=1e-6)
    np.testing.assert_allclose(t.grad.numpy(), -k * s * (1 - s), rtol=1e-6)
    h = 1e-7  # central differences on one entry
    f = lambda pp: 1 / (1 + np.exp(-k * (pp - t_np[1, 2])))  # noqa: E731
    assert p.grad.numpy()[1, 2] == pytest.approx((f(p_np[1, 2] + h) - f(p_np[1, 2] - h)) / (2 * h), rel=1e-6)


def test_db_loss_formula_in_paddlepaddle_agrees():
    """The same loss written with PaddlePaddle's ops (BCE, topk) as PaddleOCR writes it."""
    pp = pytest.importorskip("paddle", reason="PaddlePaddle is the oracle for the DBLoss formula")
    maps, label = pp.to_tensor(MAPS), pp.to_tensor(LABEL)
    p, t, b = maps[:, 0], maps[:, 1], maps[:, 2]
    tmap, tmask, gt, mask = label[:, 0], label[:, 1], label[:, 2], label[:, 3]
    bce = pp.nn.functional.binary_cross_entropy(p, gt, reduction="none")
    pos, neg = gt * mask, (1 - gt) * mask
    n_pos = int(pos.sum())
    n_neg = int(min(float(neg.sum()), n_pos * 3))
    hardest = pp.topk((neg * bce).reshape([-1]), n_neg)[0]
    shrink = ((pos * bce).sum() + hardest.sum()) / (n_pos + n_neg + 1e-6)
    l1 = ((t - tmap).abs() * tmask).sum() / (tmask.sum() + 1e-6)
    dice = 1 - 2 * (b * gt * mask).sum() / ((b * mask).sum() + (gt * mask).sum() + 1e-6)
    expected = float(5 * shrink + 10 * l1 + dice)
    got = DBLoss(main_loss_type="BCELoss")(paddle.to_tensor(MAPS), paddle.to_tensor(LABEL))
    assert float(got) == pytest.approx(expected, rel=1e-10)


def test_bad_shapes_and_settings_are_typed_errors():
    with pytest.raises(ShapeError, match="training maps"):
        DBLoss()(paddle.to_tensor(MAPS[:, :2]), paddle.to_tensor(LABEL))
    with pytest.raises(ConfigError, match="main_loss_type"):
        DBLoss(main_loss_type="Focal")
    with pytest.raises(ConfigError, match="ohem_ratio"):
        DBLoss(ohem_ratio=-1)
