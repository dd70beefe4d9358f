"""OCR metrics against hand-computed cases: PaddleOCR's det evaluator (don't-care regions, strict
IoU > 0.5, one-to-one matching, counts summed over images), RecMetric (spaces, 1 - NED) and the
end-to-end line metric."""

from __future__ import annotations

import numpy as np
import pytest

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.metric import Metric
from paddlectl.ocr.metrics import DetMetric, E2EMetric, RecMetric


def box(x, y, w=10, h=10):
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]


def det(preds, gts, ignore=None, **kwargs):
    metric = DetMetric(**kwargs)
    metric.update([preds], [gts], None if ignore is None else [ignore])
    return metric.result()


def test_det_perfect_and_partial_matches():
    assert det([box(0, 0), box(50, 0)], [box(0, 0), box(50, 0)]) == {"precision": 1.0, "recall": 1.0, "hmean": 1.0}
    # IoU of a 10x10 box shifted by 2 px: 80 / 120 = 0.667 (match); shifted by 5 px: 50 / 150 = 0.333 (no match)
    result = det([box(2, 0), box(55, 0), box(200, 0)], [box(0, 0), box(50, 0)])
    assert result == pytest.approx(
        {"precision": 1 / 3, "recall": 1 / 2, "hmean": 2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2)}
    )


def test_det_iou_threshold_is_strict():
    # a 10x20 detection over a 10x10 ground truth: IoU exactly 100 / 200 = 0.5 is not a match
    assert det([box(0, 0, 10, 20)], [box(0, 0)])["recall"] == 0.0
    assert det([box(0, 0, 10, 19)], [box(0, 0)])["recall"] == 1.0
    assert det([box(0, 0, 10, 20)], [box(0, 0)], iou_thresh=0.4)["recall"] == 1.0


def test_det_matching_is_one_to_one():
    # two detections on one line: one match, the other is a false positive
    assert det([box(0, 0), box(1, 0)], [box(0, 0)]) == pytest.approx({"precision": 0.5, "recall": 1.0, "hmean": 2 / 3})
    # one wide detection over two lines matches neither (IoU 100/210 each)
    assert det([box(0, 0, 21, 10)], [box(0, 0), box(11, 0)])["hmean"] == 0.0


def test_det_greedy_in_ground_truth_order():
    # gt 0 takes the first detection above the threshold (det 0, IoU 0.67) although det 1 fits it
    # better (IoU 1.0); gt 1 (IoU 0.43 with det 1) is then left unmatched: PaddleOCR's order
    gts, preds = [box(0, 0), box(4, 0)], [box(2, 0), box(0, 0)]
    assert det(preds, gts) == pytest.approx({"precision": 0.5, "recall": 0.5, "hmean": 0.5})


def test_det_dont_care_regions():
    gts = [box(0, 0), {"points": box(100, 0, 40, 10), "transcription": "###"}]
    # a detection inside the don't-care region (all of its area) is dropped from both counts
    assert det([box(0, 0), box(105, 0)], gts) == {"precision": 1.0, "recall": 1.0, "hmean": 1.0}
    # covered by exactly half its area: not above 0.5, so it stays a false positive
    assert det([box(0, 0), box(135, 0)], gts)["precision"] == 0.5
    # covered by 0.6 of its area: dropped
    assert det([box(0, 0), box(134, 0)], gts)["precision"] == 1.0
    # a don't-care line is no miss when nothing finds it, and no hit when something matches it
    assert det([box(0, 0)], gts)["recall"] == 1.0
    assert det([box(100, 0, 40, 10)], gts) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    # ignore_tags override the transcriptions
    assert det([box(0, 0), box(105, 0)], gts, ignore=[False, False]) == pytest.approx(
        {"precision": 0.5, "recall": 0.5, "hmean": 0.5}
    )
    assert det([box(105, 0)], [box(0, 0), box(100, 0, 40, 10)], ignore=[True, True])["precision"] == 0.0


def test_det_empty_predictions_and_empty_ground_truth():
    assert det([], [box(0, 0)]) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    assert det([box(0, 0)], []) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    assert det([], []) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    # a prediction record with no points (PaddleOCR's post-process output for an empty image)
    metric = DetMetric()
    metric.update([{"points": np.zeros((0, 4, 2))}], [[box(0, 0)]])
    assert metric.result()["recall"] == 0.0


def test_det_counts_are_summed_over_images_and_batches():
    metric = DetMetric()
    metric.update([[box(0, 0)], []], [[box(0, 0)], [box(0, 0), box(50, 0)]])  # image 1: 0 of 2 found
    metric.update([[box(0, 0), box(50, 0), box(90, 0)]], [[box(0, 0), box(50, 0)]])
    # matched 3, care gt 5, care det 4 (not the mean of per-image ratios)
    assert metric.result() == pytest.approx({"precision": 3 / 4, "recall": 3 / 5, "hmean": 2 * 0.75 * 0.6 / 1.35})
    metric.reset()
    assert metric.accumulate() == [0.0, 0.0, 0.0]


def test_det_skips_self_crossing_polygons_and_takes_any_polygon():
    bow_tie = [[0, 0], [10, 10], [10, 0], [0, 10]]
    assert det([bow_tie], [box(0, 0)]) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    assert det([box(0, 0)], [bow_tie]) == {"precision": 0.0, "recall": 0.0, "hmean": 0.0}
    # an 8-point polygon (curved text labels) against its bounding quad: IoU 0.9 (area 90 / 100)
    octagon = [[1, 0], [9, 0], [10, 1], [10, 9], [9, 10], [1, 10], [0, 9], [0, 1]]
    assert det([octagon], [box(0, 0)])["hmean"] == 1.0


def test_det_refuses_malformed_input():
    with pytest.raises(DataError, match="prediction 0 of image 0 has shape"):
        DetMetric().update([[[1, 2, 3, 4]]], [[box(0, 0)]])
    with pytest.raises(DataError, match="NaN"):
        DetMetric().update([[box(0, np.nan)]], [[box(0, 0)]])
    with pytest.raises(DataError, match="one entry per image"):
        DetMetric().update([[box(0, 0)]], [[box(0, 0)], []])
    with pytest.raises(DataError, match="ignore tags"):
        DetMetric().update([[]], [[box(0, 0)]], [[True, False]])
    with pytest.raises(DataError, match="'points'"):
        DetMetric().update([[]], [[{"transcription": "a"}]])
    with pytest.raises(DataError, match="must be a list"):
        DetMetric().update("abc", [[]])
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        DetMetric(iou_thresh=1.5)
    with pytest.raises(ConfigError, match="main_indicator 'acc'"):
        DetMetric(main_indicator="acc")


def rec(preds, labels, **kwargs):
    metric = RecMetric(**kwargs)
    metric.update(preds, labels)
    return metric.result()


def test_rec_accuracy_ignores_spaces_by_default_and_reports_both():
    result = rec(["Hello world", ("Helloworld", 0.9), "abc"], ["Hello world", "Hello world", "abd"])
    assert result["acc"] == pytest.approx(2 / 3) and result["acc_with_space"] == pytest.approx(1 / 3)
    # NED on space-free strings: 0, 0, 1/3 -> 1 - 1/9
    assert result["norm_edit_dis"] == pytest.approx(1 - 1 / 9)
    with_space = rec(["Helloworld"], ["Hello world"], ignore_space=False)
    # 1 edit over the longer string (11 characters)
    assert with_space == pytest.approx({"acc": 0.0, "acc_with_space": 0.0, "norm_edit_dis": 1 - 1 / 11})


def test_rec_filter_keeps_letters_and_digits_lower_cased():
    assert rec(["HELLO, World!"], ["hello world"], is_filter=True)["acc"] == 1.0
    assert rec(["HELLO, World!"], ["hello world"])["acc"] == 0.0


def test_rec_edge_cases():
    assert rec([], []) == {"acc": 0.0, "acc_with_space": 0.0, "norm_edit_dis": 0.0}
    # empty prediction for a label: distance 1; both empty: equal, distance 0
    assert rec(["", ""], ["ab", ""]) == {"acc": 0.5, "acc_with_space": 0.5, "norm_edit_dis": 0.5}
    with pytest.raises(DataError, match="2 predictions for 1 labels"):
        rec(["a", "b"], ["a"])
    with pytest.raises(DataError, match="prediction 0 must be a string"):
        rec([3], ["a"])


def test_e2e_line_metric():
    preds = [(box(0, 0), "ab"), (box(50, 0), "cd"), (box(300, 0), "zz")]
    gts = [(box(1, 0), "ab"), (box(50, 0), "ce"), (box(200, 0), "xyz")]
    metric = E2EMetric()
    metric.update([preds], [gts])
    # hits 1 of 3 detections and of 3 lines; edits 0 + 1 + |zz| + |xyz| = 6 over 2 + 2 + 3 characters
    assert metric.result() == pytest.approx(
        {"e2e_precision": 1 / 3, "e2e_recall": 1 / 3, "e2e_hmean": 1 / 3, "char_acc": 1 - 6 / 7}
    )


def test_e2e_takes_the_best_overlap_first_and_iou_at_threshold_matches():
    # det 0 overlaps gt 0 at IoU 0.67 and gt 1 at 1.0: it goes to gt 1 (best first, not gt order);
    # gt 0 then takes det 1 (IoU 0.54); both texts equal
    gts = [(box(0, 0), "a"), (box(2, 0), "b")]
    preds = [(box(2, 0), "b"), (box(-3, 0), "a")]
    metric = E2EMetric()
    metric.update([preds], [gts])
    assert metric.result()["e2e_hmean"] == 1.0
    # IoU exactly 0.5 (a 10x20 detection over a 10x10 line) matches: the threshold is inclusive here
    metric.reset()
    metric.update([[{"points": box(0, 0, 10, 20), "text": "a"}]], [[{"points": box(0, 0), "transcription": "a"}]])
    assert metric.result()["e2e_recall"] == 1.0
    metric = E2EMetric(iou_thresh=0.6)
    metric.update([[{"points": box(0, 0, 10, 20), "text": "a"}]], [[{"points": box(0, 0), "transcription": "a"}]])
    assert metric.result()["e2e_recall"] == 0.0


def test_e2e_dont_care_and_text_folding():
    gts = [(box(0, 0), "###"), (box(50, 0), "ABC 1")]
    preds = [(box(0, 0), "noise"), (box(50, 0), "ＡＢＣ\u30001")]  # full-width letters and ideographic space
    metric = E2EMetric()
    metric.update([preds], [gts])
    assert metric.result() == {"e2e_precision": 1.0, "e2e_recall": 1.0, "e2e_hmean": 1.0, "char_acc": 1.0}
    metric = E2EMetric(ignore_space=True)
    metric.update([[(box(50, 0), "ABC1")]], [gts])  # the unmatched don't-care line is no miss
    assert metric.result()["e2e_recall"] == 1.0
    metric = E2EMetric()
    metric.update([[]], [[]])
    assert metric.accumulate() == [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(DataError, match="line 0 of image 0's predictions must be a"):
        metric.update([["ab"]], [[]])


def test_metrics_follow_the_framework_protocol():
    from paddlectl.framework.hapi.task import metric_names

    metrics = [DetMetric(), RecMetric(), E2EMetric()]
    assert all(isinstance(m, Metric) for m in metrics)
    names = metric_names(metrics)
    assert len(names) == len(set(names)) == 10  # distinct, so one task may log several together
    for m in metrics:
        assert len(m.accumulate()) == len(m.name()) and m.main_indicator in m.name()
