"""The metrics on hand-made ground truth and detections whose AP is known by hand."""

import numpy as np
import pytest

from paddlectl.detection.metrics import GroundTruth, coco_eval, voc_ap, voc_map
from paddlectl.framework.errors import DataError

BOX_A = [10.0, 10.0, 50.0, 50.0]
BOX_B = [60.0, 60.0, 90.0, 100.0]


def truth(image_id, boxes, classes, ignore=None):
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    ignore = np.zeros(len(boxes), bool) if ignore is None else np.asarray(ignore)
    return GroundTruth(image_id, 120.0, 120.0, boxes, np.asarray(classes), ignore)


def dets(*rows):
    return np.asarray(rows, np.float64).reshape(-1, 6)


def test_perfect_detections_score_one_everywhere():
    truths = [truth(1, [BOX_A, BOX_B], [0, 1])]
    result = coco_eval(truths, [dets([0, 0.9, *BOX_A], [1, 0.8, *BOX_B])], ["a", "b"])
    assert result["bbox_ap"] == pytest.approx(1.0) and result["bbox_ap50"] == pytest.approx(1.0)
    assert result["ap_a"] == pytest.approx(1.0) and result["ap_b"] == pytest.approx(1.0)


def test_a_false_positive_ranked_first_halves_ap():
    # one object; a wrong box at 0.9 then the right one at 0.8: precision 1/2 at recall 1
    truths = [truth(1, [BOX_A], [0])]
    found = [dets([0, 0.9, *BOX_B], [0, 0.8, *BOX_A])]
    assert coco_eval(truths, found, ["a"])["bbox_ap50"] == pytest.approx(0.5)
    assert voc_map(truths, found, ["a"])["mAP"] == pytest.approx(0.5)


def test_half_the_objects_found_gives_cocos_101_point_area():
    # recall reaches 0.5 at precision 1: COCO samples recall at 0, 0.01, ..., 1 -> 51 of 101 points
    truths = [truth(1, [BOX_A, BOX_B], [0, 0])]
    found = [dets([0, 0.9, *BOX_A])]
    assert coco_eval(truths, found, ["a"])["bbox_ap"] == pytest.approx(51 / 101)
    assert voc_map(truths, found, ["a"])["mAP"] == pytest.approx(0.5)
    assert voc_map(truths, found, ["a"], eleven_point=True)["mAP"] == pytest.approx(6 / 11)


def test_box_shifted_to_iou_between_half_and_three_quarters_counts_only_at_ap50():
    shifted = [15.0, 10.0, 55.0, 50.0]  # IoU with BOX_A = 35*40 / (2*1600 - 1400) = 0.778
    loose = [20.0, 10.0, 60.0, 50.0]  # IoU = 30*40 / (3200 - 1200) = 0.6
    truths = [truth(1, [BOX_A], [0])]
    result = coco_eval(truths, [dets([0, 0.9, *loose])], ["a"])
    assert result["bbox_ap50"] == pytest.approx(1.0) and result["bbox_ap75"] == pytest.approx(0.0)
    assert coco_eval(truths, [dets([0, 0.9, *shifted])], ["a"])["bbox_ap75"] == pytest.approx(1.0)


def test_difficult_objects_neither_count_nor_penalise_in_voc():
    truths = [truth(1, [BOX_A, BOX_B], [0, 0], ignore=[False, True])]
    found = [dets([0, 0.95, *BOX_B], [0, 0.9, *BOX_A])]
    assert voc_map(truths, found, ["a"])["mAP"] == pytest.approx(1.0)


def test_voc_ap_all_point_and_eleven_point_by_hand():
    recall, precision = np.array([0.25, 0.5, 0.5, 1.0]), np.array([1.0, 1.0, 0.67, 0.5])
    assert voc_ap(recall, precision) == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert voc_ap(recall, precision, eleven_point=True) == pytest.approx((6 * 1.0 + 5 * 0.5) / 11)


def test_malformed_detections_are_data_errors():
    with pytest.raises(DataError, match=r"\[N, 6\]"):
        coco_eval([truth(1, [BOX_A], [0])], [np.zeros((2, 5))], ["a"])
    with pytest.raises(DataError, match="one per image"):
        voc_map([truth(1, [BOX_A], [0])], [], ["a"])
