"""ONNX RoiAlign: import (opset 10 and 16, avg and max, both coordinate modes) against onnxruntime on
random inputs, ONNX's own node cases, the import -> export -> import round trip, and export of
paddle.vision.ops.roi_align from a traced program."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the models are built with the onnx package")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference")
from onnx import TensorProto, helper  # noqa: E402

from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402


def _model(opset: int, **attrs):
    out_h, out_w = attrs.get("output_height", 1), attrs.get("output_width", 1)
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        "roi_align",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 10, 12]),
            helper.make_tensor_value_info("rois", TensorProto.FLOAT, [6, 4]),
            helper.make_tensor_value_info("batch", TensorProto.INT64, [6]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 3, out_h, out_w])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 10, 12)).astype("float32")
    corner = rng.uniform(-3, 16, (6, 2))
    rois = np.concatenate([corner, corner + rng.uniform(0.2, 14, (6, 2))], axis=1).astype("float32")
    return [x, rois, rng.integers(0, 2, 6).astype("int64")]


CASES = [
    (10, {}),
    (10, {"mode": "max", "output_height": 3, "output_width": 4, "sampling_ratio": 2, "spatial_scale": 0.5}),
    (16, {}),
    (16, {"coordinate_transformation_mode": "output_half_pixel", "output_height": 2, "output_width": 5}),
    (16, {"coordinate_transformation_mode": "half_pixel", "mode": "max", "output_height": 4, "spatial_scale": 0.8}),
    (16, {"mode": "avg", "sampling_ratio": 3, "output_height": 3, "output_width": 3, "spatial_scale": 1.3}),
]


@pytest.mark.parametrize(("opset", "attrs"), CASES)
def test_roialign_matches_onnxruntime(opset, attrs):
    model = _model(opset, **attrs)
    data = _inputs(opset + len(attrs))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, dict(zip(("x", "rois", "batch"), data, strict=True)))[0]
    (got,) = PaddlectlBackend.prepare(model).run(data)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("opset", "attrs"), CASES)
def test_roialign_round_trips(opset, attrs):
    from paddlectl.framework.onnx.round_trip import round_trip

    data = _inputs(opset)
    model = _model(opset, **attrs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, dict(zip(("x", "rois", "batch"), data, strict=True)))
    assert round_trip(model, [(data, want)], rtol=1e-5, atol=1e-5) == ("pass", "")


def test_roialign_passes_onnx_node_cases():
    from paddlectl.framework.onnx import conformance

    cases = conformance.node_cases("roialign", modules=("roialign",))
    assert len(cases) >= 3
    results = conformance.run_suite(cases, conformance.paddlectl_prepare)
    assert all(outcome == "pass" for outcome, _ in results.values()), results


def test_unknown_mode_is_refused_by_name():
    from paddlectl.framework.errors import OnnxImportError

    with pytest.raises(OnnxImportError, match="coordinate_transformation_mode='bogus'"):
        PaddlectlBackend.prepare(_model(16, coordinate_transformation_mode="bogus"))


@pytest.mark.parametrize("aligned", [True, False])
def test_traced_roi_align_exports_and_runs_on_onnxruntime(aligned):
    import paddlectl.framework as paddle
    from paddlectl.framework.onnx.export import program_to_onnx
    from paddlectl.framework.static import InputSpec
    from paddlectl.framework.static.input_spec import signatures
    from paddlectl.framework.static.trace import trace

    x, rois, _ = _inputs(3)
    num = np.array([2, 4], np.int32)

    def head(image, boxes, boxes_num):
        return paddle.vision.ops.roi_align(image, boxes, boxes_num, (3, 2), 0.5, 2, aligned)

    specs = [InputSpec([2, 3, 10, 12], "float32"), InputSpec([6, 4], "float32"), InputSpec([2], "int32")]
    # traced on these inputs: the tracer's made-up boxes_num would not sum to the 6 boxes
    program, _ = trace(head, signatures(specs), examples=[x, rois, num])
    model = program_to_onnx(program)
    assert "RoiAlign" in {n.op_type for n in model.graph.node}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = head(paddle.to_tensor(x), paddle.to_tensor(rois), paddle.to_tensor(num)).numpy()
    feeds = dict(zip([i.name for i in model.graph.input], (x, rois, num), strict=True))
    np.testing.assert_allclose(session.run(None, feeds)[0], want, rtol=1e-5, atol=1e-6)
