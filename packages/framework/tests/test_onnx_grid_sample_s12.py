"""GridSample import (gathers + arithmetic) against onnxruntime on random images and grids reaching
outside the image, and its refusals by name."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402

from paddlectl.framework.errors import ConversionError, OnnxImportError  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import node_model  # noqa: E402

RNG = np.random.default_rng(4)


def _model(x_shape, grid_shape, **attrs):
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    return node_model(node, {"x": (np.float32, x_shape), "grid": (np.float32, grid_shape)}, opset=16)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_equals_onnxruntime(mode, padding_mode, align_corners):
    x = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)
    grid = RNG.uniform(-1.3, 1.3, (2, 4, 6, 2)).astype(np.float32)
    model = _model(["N", 3, 5, 7], ["N", 4, 6, 2], mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    (ours,) = PaddlectlBackend.prepare(model).run([x, grid])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (ref,) = session.run(None, {"x": x, "grid": grid})
    assert ours.shape == ref.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [({"mode": "bicubic"}, "mode='bicubic'"), ({"padding_mode": "reflection"}, "padding_mode='reflection'")],
)
def test_unsupported_modes_are_refused_by_name(attrs, message):
    with pytest.raises(OnnxImportError, match=message):
        onnx_to_program(_model([1, 1, 3, 3], [1, 2, 2, 2], **attrs))


def test_symbolic_image_size_is_refused_by_name():
    with pytest.raises(ConversionError, match="GridSample.*fixed C, H, W"):
        onnx_to_program(_model([1, 1, "H", 3], [1, 2, 2, 2]))
