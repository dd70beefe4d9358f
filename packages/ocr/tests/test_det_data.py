"""Det data: label lines (malformed JSON -> DataError with file:line), PaddleOCR's operators, label tables."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.ops.random import seed
from paddlectl.ocr.det.augment import IaaAugment
from paddlectl.ocr.det.labels import DetLabelEncode, parse_det_label
from paddlectl.ocr.det.random_crop import EastRandomCropData, crop_area
from paddlectl.ocr.det.table import DetKeepKeys, pack, unpack
from paddlectl.ocr.det.task import DetTask
from paddlectl.ocr.det.transforms import DetResizeForTest, NormalizeImage, Pad
from paddlectl.ocr.task_base import SimpleDataSet

REGIONS = [
    {"transcription": "hello", "points": [[10, 10], [50, 10], [50, 30], [10, 30]]},
    {"transcription": "###", "points": [[60, 10], [90, 10], [90, 30], [60, 30], [55, 20]]},
]


def _label_file(tmp_path, lines: list[str]):
    (tmp_path / "a.png").write_bytes(b"")  # existence is all the label check needs
    label = tmp_path / "label.txt"
    label.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return label


@pytest.mark.parametrize(
    "label, message",
    [
        ('[{"transcription": "a", "points": [[1, 2], [3, 4], [5, 6]]', "not valid JSON"),
        ('{"transcription": "a"}', "JSON list"),
        ('[{"points": [[1, 2], [3, 4], [5, 6]]}]', "'transcription' and 'points'"),
        ('[{"transcription": "a", "points": [[1, 2], [3, 4]]}]', "at least 3"),
        ('[{"transcription": "a", "points": [[1, 2], [3, "x"], [5, 6]]}]', "finite"),
        ('[{"transcription": "a", "points": [[1, 2], [3, NaN], [5, 6]]}]', "finite"),
        ('[{"transcription": "a", "points": [[1, 2], [3, 1e12], [5, 6]]}]', "within 2"),
    ],
)
def test_malformed_label_line_names_file_and_line(tmp_path, label, message):
    good = "a.png\t" + json.dumps(REGIONS)
    label_file = _label_file(tmp_path, [good, "", f"a.png\t{label}"])
    with pytest.raises(DataError, match=rf"label.txt:3: .*{message}"):
        SimpleDataSet([str(label_file)], str(tmp_path), check_label=DetTask().check_label)


def test_label_encode_pads_polygons_and_marks_dont_care():
    data = DetLabelEncode()({"label": json.dumps(REGIONS)})
    assert data["polys"].shape == (2, 5, 2) and data["polys"].dtype == np.float32
    np.testing.assert_array_equal(data["polys"][0, 4], [10, 30])  # 4 points padded by repeating the last
    assert data["texts"] == ["hello", "###"] and list(data["ignore_tags"]) == [False, True]
    assert DetLabelEncode()({"label": "[]"}) is None  # no text: PaddleOCR drops the sample
    assert parse_det_label(json.dumps(REGIONS))[1]["points"][4] == [55.0, 20.0]


def test_random_crop_never_cuts_text_and_keeps_polygons_aligned():
    seed(3)
    image = np.zeros((200, 300, 3), np.uint8)
    polys = np.array(
        [[[20, 20], [120, 20], [120, 50], [20, 50]], [[150, 120], [280, 120], [280, 160], [150, 160]]], np.float32
    )
    image[20:50, 20:120] = 255
    image[120:160, 150:280] = 128
    for _ in range(10):
        data = EastRandomCropData(size=[96, 64], max_tries=20)(
            {"image": image, "polys": polys.copy(), "ignore_tags": np.array([False, False]), "texts": ["a", "b"]}
        )
        assert data["image"].shape == (64, 96, 3)
        assert 1 <= len(data["polys"]) <= 2
        for poly in data["polys"]:  # every kept box is whole inside the crop and lands on its own pixels
            x0, y0 = np.ceil(poly.min(axis=0)).astype(int) + 1
            x1, y1 = np.floor(poly.max(axis=0)).astype(int) - 1
            assert x1 < 96 and y1 < 64
            assert data["image"][y0:y1, x0:x1].min() > 0


def test_crop_area_edges_fall_outside_text():
    rng = np.random.default_rng(0)
    polys = [np.array([[10, 10], [40, 10], [40, 20], [10, 20]], np.float32)]
    for _ in range(20):
        x, y, w, h = crop_area(50, 60, polys, 0.1, 10, rng)
        assert not (10 < x < 40) and not (10 < x + w < 40)
        assert not (10 < y < 20) and not (10 < y + h < 20)


def test_resize_for_test_sizes_and_shape_row():
    image = np.zeros((300, 500, 3), np.uint8)
    data = DetResizeForTest(limit_side_len=160, limit_type="max")({"image": image})
    assert data["image"].shape == (96, 160, 3)  # 300 * 0.32 = 96, 500 * 0.32 = 160
    np.testing.assert_allclose(data["shape"], [300, 500, 96 / 300, 160 / 500])
    assert DetResizeForTest(limit_side_len=160, limit_type="max").max_size() == (160, 160)
    assert DetResizeForTest().target(300, 500) == (736, 1216)  # PaddleOCR's default: min side 736
    assert DetResizeForTest(image_shape=[60, 100]).target(300, 500) == (60, 100)  # as given, Pad rounds
    assert DetResizeForTest(resize_long=300).target(300, 500) == (256, 384)  # 180 x 300 up to multiples of 128
    assert DetResizeForTest(resize_long=300).max_size() == (384, 384)
    padded = Pad(size=[160, 192])({"image": data["image"]})["image"]
    assert padded.shape == (160, 192, 3)
    with pytest.raises(DataError, match="Pad.size"):
        Pad(size=[64, 64])({"image": data["image"]})
    with pytest.raises(ConfigError, match="limit_type"):
        DetResizeForTest(limit_side_len=160, limit_type="middle")


def test_normalize_reads_paddleocr_fraction_scale():
    out = NormalizeImage(scale="1./255.", mean=[0, 0, 0], std=[1, 1, 1])({"image": np.full((1, 1, 3), 255, np.uint8)})
    np.testing.assert_allclose(out["image"], 1.0)
    with pytest.raises(ConfigError, match="NormalizeImage.scale"):
        NormalizeImage(scale="__import__('os')")


def test_eval_table_round_trip_and_keep_keys():
    polys = np.array([[[1, 2], [3, 4], [5, 6], [7, 8]]], np.float32)
    shape = np.array([100, 200, 0.5, 0.25], np.float32)
    table = pack(shape, polys, np.array([True]), rows=3, points=5)
    assert table.shape == (4, 12)
    got_shape, got_polys, ignore = unpack(table)
    np.testing.assert_array_equal(got_shape, shape)
    assert len(got_polys) == 1 and ignore == [True]
    np.testing.assert_array_equal(got_polys[0], polys[0])
    with pytest.raises(DataError, match="regions"):
        pack(shape, np.zeros((4, 4, 2), np.float32), np.zeros(4, bool), rows=3, points=4)
    with pytest.raises(ConfigError, match="det keeps"):
        DetKeepKeys(["image", "label"])
    maps = {
        k: np.full((2, 2), i, np.float32)
        for i, k in enumerate(["threshold_map", "threshold_mask", "shrink_map", "shrink_mask"])
    }
    image, label = DetKeepKeys(["image", "threshold_map", "threshold_mask", "shrink_map", "shrink_mask"])(
        {"image": 0, **maps}
    )
    np.testing.assert_array_equal(label[:, 0, 0], [0, 1, 2, 3])  # DBLoss's channel order


def test_iaa_augment_moves_polygons_with_the_pixels():
    image = np.zeros((120, 160, 3), np.uint8)
    poly = np.array([[30, 40], [90, 40], [90, 70], [30, 70]], np.float32)
    image[40:71, 30:91] = 255
    flipped = IaaAugment([{"type": "Fliplr", "args": {"p": 1.0}}])({"image": image, "polys": poly[None].copy()})
    np.testing.assert_array_equal(flipped["image"], image[:, ::-1])
    np.testing.assert_allclose(flipped["polys"][0][:, 0], 159 - poly[:, 0])
    seed(5)
    for _ in range(5):  # PaddleOCR's default chain: flip, rotate in [-10, 10], resize by [0.5, 3]
        out = IaaAugment()({"image": image, "polys": poly[None].copy()})
        mask = np.zeros(out["image"].shape[:2], np.uint8)
        inner = out["polys"][0].mean(axis=0) + 0.8 * (out["polys"][0] - out["polys"][0].mean(axis=0))
        cv2.fillPoly(mask, [np.round(inner).astype(np.int32)], 1)
        assert out["image"][mask.astype(bool)].mean() > 250  # the box's pixels are under its polygon
    with pytest.raises(ConfigError, match="choose from Fliplr"):
        IaaAugment([{"type": "Crop", "args": {}}])
    with pytest.raises(ConfigError, match="Affine.rotate"):
        IaaAugment([{"type": "Affine", "args": {"rotate": "ten"}}])
