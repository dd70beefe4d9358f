"""PaddleSeg's metrics against numbers worked out by hand from small confusion matrices."""

import numpy as np
import pytest

from paddlectl.framework.errors import ShapeError
from paddlectl.seg.metrics import SegMetric, calculate_area, class_measurement, dice, kappa, mean_iou

# label (rows) x prediction (columns), 3 classes; one more pixel is labelled 255 and predicted 1
LABEL = np.array([[0, 0, 0, 1], [1, 1, 2, 2], [2, 2, 0, 255]])
PRED = np.array([[0, 0, 1, 1], [1, 0, 2, 2], [2, 1, 0, 1]])
# confusion: class 0 -> {0: 3, 1: 1}, class 1 -> {0: 1, 1: 2}, class 2 -> {1: 1, 2: 3}
INTERSECT, PRED_AREA, LABEL_AREA = [3, 2, 3], [4, 4, 3], [4, 3, 4]


def test_areas_are_the_confusion_matrix_diagonal_and_sums_without_ignored_pixels():
    intersect, pred, label = calculate_area(PRED, LABEL, 3)
    assert intersect.tolist() == INTERSECT and pred.tolist() == PRED_AREA and label.tolist() == LABEL_AREA


def test_class_iou_dice_precision_recall_by_hand():
    class_iou, miou = mean_iou(INTERSECT, PRED_AREA, LABEL_AREA)
    np.testing.assert_allclose(class_iou, [3 / 5, 2 / 5, 3 / 4])
    assert miou == pytest.approx((3 / 5 + 2 / 5 + 3 / 4) / 3)
    class_dice, mdice = dice(INTERSECT, PRED_AREA, LABEL_AREA)
    np.testing.assert_allclose(class_dice, [6 / 8, 4 / 7, 6 / 7])
    assert mdice == pytest.approx((6 / 8 + 4 / 7 + 6 / 7) / 3)
    acc, precision, recall = class_measurement(INTERSECT, PRED_AREA, LABEL_AREA)
    assert acc == pytest.approx(8 / 11)
    np.testing.assert_allclose(precision, [3 / 4, 2 / 4, 3 / 3])
    np.testing.assert_allclose(recall, [3 / 4, 2 / 3, 3 / 4])


def test_kappa_by_hand():
    # po = 8/11, pe = (4*4 + 4*3 + 3*4) / 11^2 = 40/121
    po, pe = 8 / 11, 40 / 121
    assert kappa(INTERSECT, PRED_AREA, LABEL_AREA) == pytest.approx((po - pe) / (1 - pe))


def test_a_class_absent_from_labels_and_predictions_scores_zero_and_counts_in_the_mean():
    label = np.array([[0, 0], [1, 1]])
    intersect, pred, area = calculate_area(label.copy(), label, 3)
    class_iou, miou = mean_iou(intersect, pred, area)
    assert class_iou.tolist() == [1.0, 1.0, 0.0] and miou == pytest.approx(2 / 3)  # PaddleSeg's convention


def test_metric_sums_areas_over_batches_so_batching_does_not_change_the_result():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, 4, 5, 7)).astype(np.float32)
    labels = rng.integers(0, 4, size=(6, 5, 7))
    labels[0, 0] = 255
    whole, split = SegMetric(4), SegMetric(4)
    whole.update(*whole.compute(logits, labels))
    for part in (slice(0, 1), slice(1, 4), slice(4, 6)):
        split.update(*split.compute(logits[part], labels[part]))
    assert whole.accumulate() == split.accumulate()
    assert whole.name()[:4] == ["miou", "acc", "kappa", "mdice"] and whole.name()[4] == "iou_0"


def test_shapes_that_differ_are_refused():
    with pytest.raises(ShapeError, match="one shape"):
        calculate_area(np.zeros((2, 3), int), np.zeros((3, 2), int), 2)
