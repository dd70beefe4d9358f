"""Conv and MaxPool with ``auto_pad=SAME_UPPER``, stride 1 and an even kernel on inputs whose height
and width are symbolic (PP-OCRv6's detector and recogniser stem): importing them failed with a
TypeError inside ``resolve_padding`` (a symbolic size plus an int). With stride 1 the pads do not
depend on the size, and the result matches onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402


def test_same_upper_stride_one_on_symbolic_sizes_matches_onnxruntime():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[2, 2], strides=[1, 1], auto_pad="SAME_UPPER"),
        helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[1, 1], auto_pad="SAME_UPPER"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, "h", "w"])],
        initializer=[numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    prepared = PaddlectlBackend.prepare(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in ((1, 3, 7, 9), (2, 3, 4, 5)):
        x = rng.standard_normal(shape).astype(np.float32)
        (ours,) = prepared.run([x])
        (ref,) = session.run(None, {"x": x})
        assert ours.shape == ref.shape == (shape[0], 4, *shape[2:])
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
