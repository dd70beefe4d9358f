"""The losses by hand (OHEM's selection, Dice) and against PaddlePaddle (cross-entropy with ignore)."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, ShapeError
from paddlectl.seg.losses import CrossEntropyLoss, DiceLoss, OhemCrossEntropyLoss, SegLoss

TRUE_PROB = np.array([0.9, 0.6, 0.3, 0.95])


def _two_class(true_prob):
    """Logits [1, 2, 1, W] whose softmax gives ``true_prob`` to class 0, the label of every pixel."""
    logits = np.stack([np.log(true_prob), np.log(1 - true_prob)])[None, :, None, :].astype(np.float32)
    return paddle.to_tensor(logits), paddle.to_tensor(np.zeros((1, 1, len(true_prob)), np.int64))


def test_ohem_scores_pixels_below_thresh_or_the_min_kept_hardest():
    logits, label = _two_class(TRUE_PROB)
    loss = OhemCrossEntropyLoss(thresh=0.7, min_kept=1)(logits, label)
    assert float(loss) == pytest.approx(-np.log([0.6, 0.3]).mean(), rel=1e-5)
    loss = OhemCrossEntropyLoss(thresh=0.7, min_kept=4)(logits, label)  # threshold rises to the 4th smallest
    assert float(loss) == pytest.approx(-np.log([0.9, 0.6, 0.3]).mean(), rel=1e-5)


def test_cross_entropy_ignores_255_as_paddle_does():
    oracle = pytest.importorskip("paddle", reason="PaddlePaddle is the oracle for cross-entropy with ignore_index")
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 4, 3, 5)).astype(np.float32)
    labels = rng.integers(0, 4, (2, 3, 5))
    labels[0, 1] = 255
    ours = float(CrossEntropyLoss()(paddle.to_tensor(logits), paddle.to_tensor(labels)))
    theirs = float(
        oracle.nn.functional.cross_entropy(oracle.to_tensor(logits), oracle.to_tensor(labels), ignore_index=255, axis=1)
    )
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_dice_by_hand_and_gradients_flow():
    logits = paddle.to_tensor(np.array([[[[10.0, -10.0]], [[-10.0, 10.0]]]], np.float32), stop_gradient=False)
    label = paddle.to_tensor(np.array([[[0, 0]]]))
    # softmax ~ one-hot of [0, 1]: class 0 intersection 1, cardinality 1 + 2; class 1: 0 and 1 + 0
    loss = DiceLoss(smooth=1.0)(logits, label)
    assert float(loss) == pytest.approx(1 - ((2 + 1) / (3 + 1) + 1 / (1 + 1)) / 2, abs=1e-4)
    loss.backward()
    assert np.isfinite(logits.grad.numpy()).all()


@pytest.mark.parametrize("loss", [CrossEntropyLoss(), OhemCrossEntropyLoss(min_kept=2), DiceLoss()])
def test_a_batch_whose_pixels_are_all_ignored_gives_a_finite_loss(loss):
    logits = paddle.to_tensor(np.zeros((1, 3, 2, 2), np.float32))
    value = float(loss(logits, paddle.to_tensor(np.full((1, 2, 2), 255))))
    assert np.isfinite(value)


def test_seg_loss_weights_one_loss_per_output_and_checks_its_config():
    logits, label = _two_class(TRUE_PROB)
    ce = float(CrossEntropyLoss()(logits, label))
    combined = SegLoss([{"name": "CrossEntropyLoss"}, {"name": "CrossEntropyLoss"}], [1.0, 0.5])
    assert float(combined([logits, logits], label)) == pytest.approx(1.5 * ce, rel=1e-6)
    assert float(combined(logits, label)) == pytest.approx(ce, rel=1e-6)  # eval mode: the main output only
    mixed = SegLoss(
        [{"name": "MixedLoss", "losses": [{"name": "CrossEntropyLoss"}, {"name": "DiceLoss"}], "coef": [1, 1]}]
    )
    assert float(mixed(logits, label)) == pytest.approx(ce + float(DiceLoss()(logits, label)), rel=1e-6)
    with pytest.raises(ConfigError, match="one weight per entry"):
        SegLoss([{"name": "CrossEntropyLoss"}], [1, 1])
    with pytest.raises(ConfigError, match="did you mean 'DiceLoss'"):
        SegLoss([{"name": "DiseLoss"}])
    with pytest.raises(ShapeError, match=r"labels \[N, H, W\]"):
        CrossEntropyLoss()(logits, paddle.to_tensor(np.zeros((1, 4), np.int64)))
