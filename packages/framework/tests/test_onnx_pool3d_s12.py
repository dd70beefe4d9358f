"""3-D MaxPool/AveragePool/LpPool import (two separable 2-D pools), dilated MaxPool (one strided
slice per window tap) and 3-D Conv (one 2-D conv per depth tap) against onnxruntime, the
PyTorch-exported cases the onnx wheel ships, and the refusal of symbolic inner sizes."""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.onnx import conformance  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import node_model  # noqa: E402


def _pool_model(op: str, shape, dtype=np.float32, **attrs):
    return node_model(helper.make_node(op, ["x"], ["y"], **attrs), {"x": (dtype, shape)}, opset=18)


CASES = [
    ("MaxPool", {"kernel_shape": [2, 2, 2]}),
    ("MaxPool", {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0], "ceil_mode": 1}),
    ("MaxPool", {"kernel_shape": [3, 3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2, 2]}),
    ("AveragePool", {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 1, 0, 0, 1, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3, 3], "pads": [1, 1, 1, 1, 1, 1], "count_include_pad": 1}),
    ("LpPool", {"kernel_shape": [2, 2, 3], "p": 3, "strides": [2, 1, 1]}),
    ("LpPool", {"kernel_shape": [2, 2, 2], "pads": [1, 0, 1, 0, 1, 1]}),
    ("MaxPool", {"kernel_shape": [2, 2, 2], "dilations": [2, 1, 3], "strides": [1, 2, 1]}),
]
DILATED_2D = [
    {"kernel_shape": [3, 2], "dilations": [2, 3]},
    {"kernel_shape": [3, 3], "dilations": [2, 2], "strides": [2, 3], "pads": [1, 2, 2, 1], "ceil_mode": 1},
    {"kernel_shape": [2, 3], "dilations": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [2, 2], "dilations": [2, 2], "auto_pad": "VALID", "strides": [3, 1]},
]


@pytest.mark.parametrize("attrs", DILATED_2D)
@pytest.mark.parametrize("dtype", [np.float32, np.uint8])
def test_dilated_max_pool_equals_onnx_reference(attrs, dtype):
    """Against onnx's reference evaluator, which agrees with onnxruntime on these cases but the
    SAME_UPPER one, where onnxruntime 1.32 returns 4x5 against ONNX's shape inference's 5x6."""
    x = (np.random.default_rng(3).standard_normal((2, 3, 9, 11)) * 50 + 100).astype(dtype)
    model = _pool_model("MaxPool", list(x.shape), dtype, **attrs)
    (ours,) = PaddlectlBackend.prepare(model).run([x])
    (ref,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert ours.shape == ref.shape and ours.dtype == ref.dtype
    np.testing.assert_array_equal(ours, ref)


@pytest.mark.parametrize(("op", "attrs"), CASES)
def test_3d_pools_equal_onnxruntime(op, attrs):
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    model = _pool_model(op, list(x.shape), **attrs)
    (ours,) = PaddlectlBackend.prepare(model).run([x])
    (ref,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_symbolic_batch_is_kept():
    x = np.random.default_rng(2).standard_normal((3, 2, 4, 4, 4)).astype(np.float32)
    model = _pool_model("MaxPool", ["N", 2, 4, 4, 4], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
    (ours,) = PaddlectlBackend.prepare(model).run([x])
    np.testing.assert_array_equal(ours, x.reshape(3, 2, 2, 2, 2, 2, 2, 2).max(axis=(3, 5, 7)))


def test_symbolic_depth_is_refused_by_name():
    with pytest.raises(ConversionError, match="3-D pool needs fixed channel, depth"):
        onnx_to_program(_pool_model("AveragePool", ["N", 2, "D", 4, 4], kernel_shape=[2, 2, 2]))


@pytest.mark.parametrize(
    "name",
    [
        "test_AvgPool3d",
        "test_AvgPool3d_stride",
        "test_MaxPool3d_stride_padding",
        "test_MaxPool2d_stride_padding_dilation",
    ],
)
def test_pytorch_exported_3d_pools_pass(name):
    (path,) = [p for p in conformance.pytorch_cases() if os.path.basename(p) == name]
    assert conformance.run_pytorch_case(path)[0] == "pass"


CONV3D = [
    {},
    {"strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0], "dilations": [1, 2, 1]},
    {"group": 2, "pads": [1, 1, 1, 1, 1, 1], "dilations": [2, 1, 1], "strides": [1, 2, 1]},
]


@pytest.mark.parametrize("attrs", CONV3D)
@pytest.mark.parametrize("bias", [False, True])
def test_conv3d_equals_onnxruntime(attrs, bias):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 6, 7, 8)).astype(np.float32)
    inits = {"w": rng.standard_normal((6, 4 // attrs.get("group", 1), 3, 2, 3)).astype(np.float32)}
    if bias:
        inits["b"] = rng.standard_normal(6).astype(np.float32)
    node = helper.make_node("Conv", ["x", *inits], ["y"], **attrs)
    model = node_model(node, {"x": (np.float32, ["N", 4, 6, 7, 8])}, inits, opset=18)
    (ours,) = PaddlectlBackend.prepare(model).run([x])
    (ref,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)


def test_conv3d_same_padding_is_refused_by_name():
    w = np.zeros((2, 1, 2, 2, 2), np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER")
    with pytest.raises(ConversionError, match="auto_pad='SAME_UPPER' is not supported for 3-D Conv"):
        onnx_to_program(node_model(node, {"x": (np.float32, [1, 1, 4, 4, 4])}, {"w": w}, opset=18))
