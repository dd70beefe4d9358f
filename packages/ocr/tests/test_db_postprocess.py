"""DB post-processing: hand-computed cases, settings checks, and parity with RapidOCR's own
``DBPostProcess`` (PaddleOCR's) on the PP-OCRv4 detector's probability maps of rendered images and
on maps drawn from rendered glyphs."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.ocr.db_postprocess import DBParams, boxes_from_probability, filter_det_boxes
from paddlectl.ocr.synthetic import document_page, font


def test_one_region_by_hand():
    prob = np.zeros((64, 128), np.float32)
    prob[10:20, 10:60] = 0.9
    boxes, scores = boxes_from_probability(prob, 64, 128)
    # dilated (2x2) region: rows 10..20, columns 10..60; its rectangle 50 x 10 covers 11 x 51 pixels,
    # 500 of them at 0.9; unclip distance 500 * 1.6 / 120 = 6.67 px on each side, rounded
    assert scores == [pytest.approx(0.9 * 500 / 561)]
    assert boxes.tolist() == [[[3, 3], [67, 3], [67, 27], [3, 27]]]
    # scaled to a source twice the size
    assert boxes_from_probability(prob, 128, 256)[0].tolist() == [[[6, 6], [134, 6], [134, 54], [6, 54]]]
    # without dilation: rectangle 49 x 9, distance 441 * 1.6 / 116 = 6.08
    boxes, scores = boxes_from_probability(prob, 64, 128, DBParams(use_dilation=False))
    assert scores == [pytest.approx(0.9)] and boxes.tolist() == [[[4, 4], [65, 4], [65, 25], [4, 25]]]


def test_fast_score_is_the_rectangle_slow_the_contour():
    prob = np.zeros((48, 64), np.float32)
    prob[10:30, 10:20] = 0.8  # an L: 200 + 300 pixels inside its 40 x 20 pixel rectangle
    prob[20:30, 10:50] = 0.8
    fast = boxes_from_probability(prob, 48, 64, DBParams(box_thresh=0, use_dilation=False))[1]
    slow = boxes_from_probability(prob, 48, 64, DBParams(box_thresh=0, use_dilation=False, score_mode="slow"))[1]
    assert fast == [pytest.approx(0.8 * 500 / 800)] and slow == [pytest.approx(0.8)]
    assert boxes_from_probability(prob, 48, 64, DBParams(box_thresh=0.6, use_dilation=False))[0].shape == (0, 4, 2)


def test_small_regions_and_candidate_limit():
    prob = np.zeros((64, 128), np.float32)
    prob[30:31, 5:7] = 0.9  # 1 x 2 px: shorter side under min_size
    assert boxes_from_probability(prob, 64, 128)[0].shape == (0, 4, 2)
    prob[5:15, 20:60] = prob[30:40, 20:60] = 0.9
    assert len(boxes_from_probability(prob, 64, 128)[0]) == 2
    assert len(boxes_from_probability(prob, 64, 128, DBParams(max_candidates=2))[0]) == 1  # the tiny contour was one
    assert boxes_from_probability(np.zeros((32, 32)), 32, 32)[0].shape == (0, 4, 2)


def test_bad_maps_and_settings():
    with pytest.raises(DataError, match=r"shape \[1, 1, 8, 8\]"):
        boxes_from_probability(np.zeros((1, 1, 8, 8)), 8, 8)
    with pytest.raises(DataError, match="NaN"):
        boxes_from_probability(np.full((8, 8), np.nan), 8, 8)
    with pytest.raises(DataError, match="src_w must be a positive integer"):
        boxes_from_probability(np.zeros((8, 8)), 8, 0)
    with pytest.raises(DataError, match=r"shape \[0, 8\]"):
        boxes_from_probability(np.zeros((0, 8)), 8, 8)
    for bad in (
        {"thresh": 1.5},
        {"box_thresh": "0.5"},
        {"unclip_ratio": 0},
        {"max_candidates": 0},
        {"score_mode": "exact"},
    ):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            DBParams(**bad)


# ----- parity with RapidOCR (PaddleOCR's DBPostProcess) ---------------------------------------------


def _rendered_pages() -> dict[str, np.ndarray]:
    """A page, the page rotated 12 degrees, the page under a perspective tilt, and short lines in
    several faces and sizes."""
    page = document_page(min_height=640)
    h, w = page.shape[:2]
    rotated = np.asarray(Image.fromarray(page).rotate(12, expand=True, fillcolor=(252, 251, 247)))
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = np.float32([[40, 30], [w - 10, 0], [w, h], [0, h - 40]])
    tilted = cv2.warpPerspective(page, cv2.getPerspectiveTransform(src, dst), (w, h), borderValue=(252, 251, 247))
    lines = Image.new("RGB", (700, 420), "white")
    draw = ImageDraw.Draw(lines)
    for i, (text, name, size) in enumerate(
        [
            ("Hello 2026", "DejaVuSans.ttf", 44),
            ("serif italic", "DejaVuSerif-Italic.ttf", 30),
            ("x", "DejaVuSans.ttf", 18),
        ]
    ):
        draw.text((30 + 150 * i, 40 + 120 * i), text, font=font(name, size), fill="black")
    return {"page": page, "rotated": rotated, "tilted": tilted, "lines": np.asarray(lines)}


@pytest.fixture(scope="module")
def detector_maps():
    """(image, the PP-OCRv4 detector's probability map [1, 1, H, W]) for each rendered page."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("rapidocr_onnxruntime")
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

    from paddlectl.ocr.pipeline import rapidocr_model_paths

    session = ort.InferenceSession(rapidocr_model_paths()[0], providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return {
        k: (img, session.run(None, {name: DetPreProcess(736, "min")(img)})[0]) for k, img in _rendered_pages().items()
    }


def _glyph_map(seed: int) -> np.ndarray:
    """A probability map drawn from rendered text: random words, sizes and angles, blurred ink."""
    rng = np.random.default_rng(seed)
    canvas = Image.new("F", (320, 256), 0.0)
    for _ in range(6):
        word = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), rng.integers(1, 9)))
        layer = Image.new("F", (320, 256), 0.0)
        ImageDraw.Draw(layer).text(
            (int(rng.integers(0, 240)), int(rng.integers(0, 220))),
            word,
            font=font("DejaVuSans-Bold.ttf", int(rng.integers(8, 40))),
            fill=1.0,
        )
        layer = layer.rotate(float(rng.uniform(-40, 40)), center=(160, 128))
        canvas = Image.fromarray(np.maximum(np.asarray(canvas), np.asarray(layer)))
    prob = cv2.GaussianBlur(np.asarray(canvas, np.float32), (0, 0), float(rng.uniform(0.8, 3.0)))
    return (prob / max(float(prob.max()), 1e-6) * rng.uniform(0.5, 1.0)).astype(np.float32)[None, None]


SETTINGS = [
    DBParams(),  # RapidOCR / PP-OCRv4
    DBParams(thresh=0.2, box_thresh=0.45, max_candidates=3000, unclip_ratio=1.4, use_dilation=False),  # PP-OCRv5
    DBParams(box_thresh=0.3, unclip_ratio=2.0, score_mode="slow"),
]


def _assert_same_as_rapidocr(prob: np.ndarray, src_h: int, src_w: int, params: DBParams) -> int:
    from rapidocr_onnxruntime.ch_ppocr_det.utils import DBPostProcess

    reference = DBPostProcess(
        thresh=params.thresh,
        box_thresh=params.box_thresh,
        max_candidates=params.max_candidates,
        unclip_ratio=params.unclip_ratio,
        score_mode=params.score_mode,
        use_dilation=params.use_dilation,
    )
    expected, expected_scores = reference(prob, (src_h, src_w))
    boxes, scores = boxes_from_probability(prob[0, 0], src_h, src_w, params)
    assert boxes.shape == np.asarray(expected).reshape(-1, 4, 2).shape
    assert np.abs(boxes - np.asarray(expected).reshape(-1, 4, 2)).max(initial=0) <= 1
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-6)
    return len(boxes)


@pytest.mark.parametrize("params", SETTINGS, ids=["v4", "v5", "slow"])
def test_boxes_match_rapidocr_on_detector_maps(detector_maps, params):
    found = 0
    for img, prob in detector_maps.values():
        found += _assert_same_as_rapidocr(prob, img.shape[0], img.shape[1], params)
    assert found >= 12  # four page lines three times, plus the short lines


@pytest.mark.parametrize("seed", range(12))
def test_boxes_match_rapidocr_on_glyph_maps(seed):
    pytest.importorskip("rapidocr_onnxruntime")
    prob = _glyph_map(seed)
    assert sum(_assert_same_as_rapidocr(prob, 512 + 7 * seed, 640 - 5 * seed, p) for p in SETTINGS) > 0


def _rapidocr_crops(img: np.ndarray, boxes) -> list[np.ndarray]:
    from rapidocr_onnxruntime import RapidOCR

    # get_crop_img_list reads nothing from the instance: PaddleOCR's get_rotate_crop_image per box
    return RapidOCR.get_crop_img_list(None, img, [np.asarray(b, np.float32) for b in boxes])


def test_crops_match_rapidocr(detector_maps):
    from paddlectl.ocr.pipeline import crop

    count = 0
    for img, prob in detector_maps.values():
        boxes, _ = boxes_from_probability(prob[0, 0], img.shape[0], img.shape[1])
        for ours, expected in zip([crop(img, b) for b in boxes], _rapidocr_crops(img, boxes), strict=True):
            np.testing.assert_array_equal(ours, expected)
            count += 1
    assert count >= 12


def test_tall_and_tilted_crops_match_rapidocr():
    from paddlectl.ocr.pipeline import crop

    img = np.asarray(Image.fromarray(document_page(min_height=640)).rotate(90, expand=True))
    boxes = np.array(
        [
            [[30, 40], [70, 40], [70, 400], [30, 400]],  # vertical line: 1.5x taller than wide, turned 90 degrees
            [[100, 100], [130, 100], [130, 145], [100, 145]],  # exactly 1.5: turned
            [[200, 100], [230, 100], [230, 144], [200, 144]],  # just under 1.5: kept
            [[300, 60], [520, 90], [510, 150], [290, 118]],  # a skewed quadrilateral
            [[-5, 600], [60, 600], [60, 740], [-5, 740]],  # past the image: edges replicated
        ],
        np.int32,
    )
    ours = [crop(img, b) for b in boxes]
    expected = _rapidocr_crops(img, boxes)
    assert [o.shape for o in ours] == [e.shape for e in expected]
    assert ours[0].shape[1] > ours[0].shape[0] and ours[1].shape[1] == 45 and ours[2].shape == (44, 30, 3)
    for o, e in zip(ours, expected, strict=True):
        np.testing.assert_array_equal(o, e)


def _rapidocr_filter(boxes: np.ndarray, src_h: int, src_w: int) -> np.ndarray:
    from rapidocr_onnxruntime.ch_ppocr_det.text_detect import TextDetector

    # filter_tag_det_res and the helpers it calls read nothing from the instance
    return np.asarray(object.__new__(TextDetector).filter_tag_det_res(boxes.copy(), (src_h, src_w))).reshape(-1, 4, 2)


def test_filter_det_boxes_by_hand():
    boxes = np.array(
        [
            [[90, 10], [100, 10], [100, 30], [90, 30]],  # touches the right edge (x = w): clipped to w - 1
            [[10, 40], [13, 40], [13, 60], [10, 60]],  # 3 px wide: dropped
            [[30, 70], [20, 60], [60, 62], [58, 75]],  # corners out of order: TL, TR, BR, BL again
        ],
        np.int32,
    )
    out = filter_det_boxes(boxes, 80, 100)
    assert out.dtype == np.float32 and out.tolist() == [
        [[90, 10], [99, 10], [99, 30], [90, 30]],
        [[20, 60], [60, 62], [58, 75], [30, 70]],
    ]
    assert filter_det_boxes(np.zeros((0, 4, 2)), 80, 100).shape == (0, 4, 2)
    with pytest.raises(DataError, match=r"\[K, 4, 2\], got shape \[2, 2\]"):
        filter_det_boxes(np.zeros((2, 2)), 80, 100)


def test_filter_det_boxes_matches_rapidocr(detector_maps):
    rng = np.random.default_rng(0)
    cases = [
        (boxes_from_probability(prob[0, 0], *img.shape[:2])[0], *img.shape[:2]) for img, prob in detector_maps.values()
    ]
    cases.append((rng.integers(-20, 140, size=(40, 4, 2)), 120, 100))  # arbitrary quadrilaterals, many off the image
    for boxes, h, w in cases:
        np.testing.assert_array_equal(
            filter_det_boxes(boxes, h, w), _rapidocr_filter(np.asarray(boxes, np.float32), h, w)
        )
