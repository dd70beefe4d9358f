"""The OCR chain's pieces (geometry, DB post-processing, CTC decoding, resizing) and the whole
det -> crop -> cls -> rec chain against RapidOCR on rendered images."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from paddlectl.ocr.ctc import ctc_greedy_decode, dictionary_classes
from paddlectl.ocr.db_postprocess import DBParams, boxes_from_probability
from paddlectl.ocr.geometry import (
    homography,
    min_area_rect,
    order_corners,
    polygon_mask,
    round_offset,
    warp_perspective,
)
from paddlectl.ocr.preprocess import det_input, det_size, letterbox, line_input, resize
from paddlectl.ocr.synthetic import document_page, font, text_line


def test_min_area_rect_of_a_rotated_rectangle():
    angle = np.deg2rad(20)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    pts = np.array([a * u + b * v for a in np.linspace(0, 30, 16) for b in np.linspace(0, 8, 5)]) + 50
    corners, w, h = min_area_rect(pts)
    assert sorted([w, h]) == pytest.approx([8, 30])
    ordered = order_corners(corners)
    assert ordered[0][0] < ordered[1][0] and ordered[3][1] > ordered[0][1]


def test_polygon_mask_includes_the_border():
    mask = polygon_mask(np.array([[1, 1], [4, 1], [4, 3], [1, 3]]), 5, 6)
    assert mask.sum() == 4 * 3 and mask[1, 1] and mask[3, 4] and not mask[0, 0]


def test_db_postprocess_finds_each_region_grown_by_unclip():
    prob = np.zeros((64, 128), np.float32)
    prob[10:20, 10:60] = 0.9
    prob[40:50, 30:110] = 0.8
    prob[30:31, 5:7] = 0.9  # too small: dropped
    boxes, scores = boxes_from_probability(prob, 128, 256, DBParams())
    assert len(boxes) == 2 and all(s > 0.7 for s in scores)
    first = boxes[np.argmin(boxes[:, 0, 1])]
    # region 51x11 px (dilated), centres span 50x10; unclip grows each side by 500*1.6/120 = 6.7 px
    assert first[0].tolist() == pytest.approx([2 * 3.3, 2 * 3.3], abs=2)
    assert first[2][0] == pytest.approx(2 * (60 + 6.7), abs=2)


def test_ctc_merges_repeats_and_drops_blanks():
    classes = dictionary_classes(["a", "b"])
    steps = [1, 1, 0, 1, 2, 2, 3, 0]
    probs = np.full((1, len(steps), 4), 0.1, np.float32)
    probs[0, np.arange(len(steps)), steps] = 0.7
    ((text, score),) = ctc_greedy_decode(probs, classes)
    assert text == "aab " and score == pytest.approx(0.7)
    with pytest.raises(ValueError, match="dictionary"):
        ctc_greedy_decode(probs[..., :3], classes)


def test_resize_and_line_input():
    img = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    np.testing.assert_array_equal(resize(img, 6, 4), img)
    line = np.random.default_rng(0).integers(0, 256, (43, 411, 3), dtype=np.uint8)  # the peers' rounding, bit for bit
    np.testing.assert_array_equal(resize(line, 542, 48), cv2.resize(line, (542, 48)))
    x = line_input(np.full((10, 20, 3), 255, np.uint8), 48, 192)
    assert x.shape == (3, 48, 192) and np.all(x[:, :, :96] == 1.0) and np.all(x[:, :, 96:] == 0.0)
    assert det_size(300, 700) == (736, 1728) and det_size(1000, 800) == (992, 800)
    padded, top = letterbox(np.zeros((20, 400, 3), np.uint8))
    assert top == 40 and padded.shape[0] == 100


def test_detector_input_takes_a_mean_and_std_per_channel():
    img = np.full((40, 40, 3), 255, np.uint8)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    x = det_input(img, 64, mean, std)
    assert x.shape == (1, 3, 64, 64)
    np.testing.assert_allclose(x[0, :, 0, 0], [(1 - m) / s for m, s in zip(mean, std, strict=True)], rtol=1e-6)
    assert np.all(det_input(img, 64)[0] == 1.0)  # RapidOCR's scalar 0.5 / 0.5


def test_warp_with_identity_homography_is_a_copy():
    img = text_line("abc", size=20)
    h, w = img.shape[:2]
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    np.testing.assert_array_equal(warp_perspective(img, homography(corners, corners), w, h), img)


def _lines_image() -> np.ndarray:
    """Text lines in several fonts and sizes on one square-ish canvas (keeps the detector at 736x736)."""
    from PIL import Image, ImageDraw

    canvas = Image.new("RGB", (640, 640), "white")
    draw = ImageDraw.Draw(canvas)
    y = 40
    for text, name, size in [
        ("Hello paddlectl", "DejaVuSans.ttf", 40),
        ("Serif italic line", "DejaVuSerif-Italic.ttf", 30),
        ("MONO 12345", "DejaVuSansMono-Bold.ttf", 36),
        ("small print here", "DejaVuSans.ttf", 20),
    ]:
        draw.text((30, y), text, font=font(name, size), fill="black")
        y += size + 60
    return np.asarray(canvas)


@pytest.fixture(scope="module")
def systems():
    pytest.importorskip("onnxruntime")
    rapidocr = pytest.importorskip("rapidocr_onnxruntime")
    from paddlectl.ocr.pipeline import TextSystem, rapidocr_model_paths

    return TextSystem(*rapidocr_model_paths()), rapidocr.RapidOCR()


@pytest.mark.parametrize("image", ["lines", "page"])
def test_chain_gives_rapidocr_strings(systems, image):
    ours, reference = systems
    img = _lines_image() if image == "lines" else document_page(min_height=640)
    result = ours(img)
    expected, _ = reference(img)
    texts = [r.text for r in result]
    assert texts == [e[1] for e in expected]
    assert ("Revenue grew by 12 percent" if image == "page" else "Hello paddlectl") in texts
    assert len(result) >= 4
    for r, e in zip(result, expected, strict=True):
        assert np.abs(np.array(r.box) - np.array(e[0])).max() <= 2


def test_round_offset_matches_clippers_polygon():
    box = np.array([[10.7, 5.2], [50.9, 5.2], [50.9, 15.6], [10.7, 15.6]])
    grown = round_offset(box, 3.3)
    # what pyclipper.PyclipperOffset (JT_ROUND, ET_CLOSEDPOLYGON) returns for this box and distance
    expected = [
        [52, 3],
        [53, 5],
        [53, 15],
        [52, 17],
        [50, 18],
        [10, 18],
        [8, 17],
        [7, 15],
        [7, 5],
        [8, 3],
        [10, 2],
        [50, 2],
    ]
    assert sorted(map(tuple, grown.astype(int).tolist())) == sorted(map(tuple, expected))


def test_run_many_equals_one_at_a_time_and_keeps_the_order(systems):
    from dataclasses import replace

    ours, _ = systems
    images = [_lines_image(), document_page(min_height=640), _lines_image()[:, ::-1].copy()]
    alone = [ours.run(img) for img in images]
    two = replace(ours.settings, workers=2)
    ours.settings, saved = two, ours.settings
    try:
        together = list(ours.run_many(images))
    finally:
        ours.settings = saved
    assert [p.dt_polys for p in together] == [p.dt_polys for p in alone]
    assert [[(r.text, r.score) for r in p.lines] for p in together] == [
        [(r.text, r.score) for r in p.lines] for p in alone
    ]


def test_a_clone_shares_the_models_and_has_its_own_predictors(systems):
    ours, _ = systems
    twin = ours.clone()
    assert twin.det is not ours.det and twin.rec is not ours.rec and twin.cls is not ours.cls
    assert twin.det._model is ours.det._model and twin.classes is ours.classes
