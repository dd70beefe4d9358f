"""Loop import (unrolled: a known trip count and/or condition; a data-dependent condition followed
with ``where`` when there are no scan outputs) against onnxruntime and onnx's own loop case, and
its refusals by name."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.onnx import conformance  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402

RNG = np.random.default_rng(13)
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=16):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _check(model, feeds: dict):
    ours = PaddlectlBackend.prepare(model).run(list(feeds.values()))
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for o, r in zip(ours, ref, strict=True):
        assert o.shape == r.shape and o.dtype == r.dtype
        np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)
    return ours


def _accumulate_body(cond_nodes: list, scan: bool = True):
    """Body (i, cond, s) -> (cond_out, s * x + i, [s as a scan output]): x from the outer scope."""
    nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=F32),
        helper.make_node("Mul", ["s", "x"], ["sx"]),
        helper.make_node("Add", ["sx", "i_f"], ["s_out"]),
        *cond_nodes,
    ]
    outputs = [_vi("cond_out", BOOL, []), _vi("s_out", F32, [3])]
    if scan:
        nodes.append(helper.make_node("Identity", ["s"], ["seen"]))
        outputs.append(_vi("seen", F32, [3]))
    inputs = [_vi("i", I64, []), _vi("cond", BOOL, []), _vi("s", F32, [3])]
    return helper.make_graph(nodes, "body", inputs, outputs)


@pytest.mark.parametrize("opset", [11, 16, 21])
def test_loop_with_a_trip_count_equals_onnxruntime(opset):
    body = _accumulate_body([helper.make_node("Identity", ["cond"], ["cond_out"])])
    node = helper.make_node("Loop", ["M", "", "s0"], ["s", "trace"], body=body)
    model = _model(
        [node], [_vi("x", F32, [3]), _vi("s0", F32, [3])], [_vi("s", F32, [3]), _vi("trace", F32, [4, 3])],
        [onnx.numpy_helper.from_array(np.array(4, np.int64), "M")], opset,
    )  # fmt: skip
    feeds = {"x": RNG.standard_normal(3).astype(np.float32), "s0": RNG.standard_normal(3).astype(np.float32)}
    s, trace = _check(model, feeds)
    assert trace.shape == (4, 3)


def test_loop_stopped_by_a_condition_on_the_iteration_number():
    """cond_out = i < 2 is known at import: three iterations of a trip count of 10."""
    two = helper.make_node("Constant", [], ["two"], value=onnx.numpy_helper.from_array(np.array(2, np.int64)))
    body = _accumulate_body([two, helper.make_node("Less", ["i", "two"], ["cond_out"])])
    node = helper.make_node("Loop", ["M", "c", "s0"], ["s", "trace"], body=body)
    inits = [
        onnx.numpy_helper.from_array(np.array(10, np.int64), "M"),
        onnx.numpy_helper.from_array(np.array(True), "c"),
    ]
    model = _model([node], [_vi("x", F32, [3]), _vi("s0", F32, [3])], [_vi("s", F32, [3]), _vi("trace", F32, ["T", 3])],
                   inits)  # fmt: skip
    feeds = {"x": RNG.standard_normal(3).astype(np.float32), "s0": RNG.standard_normal(3).astype(np.float32)}
    assert _check(model, feeds)[1].shape == (3, 3)


def _doubling_model(cond_from_data_at_start: bool):
    """while sum(s) < 100 (at most 12 times): s = 2 * s; the condition read from the data."""
    limit = onnx.numpy_helper.from_array(np.array(100, np.float32), "limit")
    two = onnx.numpy_helper.from_array(np.array(2, np.float32), "two")
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "two"], ["s_out"]), helper.make_node("ReduceSum", ["s_out"], ["total"],
                                                                             keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],
        "body", [_vi("i", I64, []), _vi("cond", BOOL, []), _vi("s", F32, [3])],
        [_vi("cond_out", BOOL, []), _vi("s_out", F32, [3])],
    )  # fmt: skip
    nodes = [helper.make_node("Loop", ["M", "c", "s0"], ["s"], body=body)]
    inits = [onnx.numpy_helper.from_array(np.array(12, np.int64), "M"), limit, two]
    if cond_from_data_at_start:
        nodes[:0] = [helper.make_node("ReduceSum", ["s0"], ["t0"], keepdims=0),
                     helper.make_node("Less", ["t0", "limit"], ["c"])]  # fmt: skip
    else:
        inits.append(onnx.numpy_helper.from_array(np.array(True), "c"))
    return _model(nodes, [_vi("s0", F32, [3])], [_vi("s", F32, [3])], inits)


@pytest.mark.parametrize("from_start", [False, True])
@pytest.mark.parametrize("start", [0.5, 7.0, 150.0, 1e-4])
def test_loop_on_a_data_dependent_condition_equals_onnxruntime(from_start, start):
    """Different inputs stop after different iteration counts (none, for 150 with the first
    condition read from the data; 12, the trip count, for 1e-4) within one imported program."""
    model = _doubling_model(from_start)
    program, _ = onnx_to_program(model)
    assert "where" in {op.name for op in program.walk()}
    _check(model, {"s0": np.full(3, start, np.float32)})


def test_loop_trip_count_fed_as_an_input_is_bound_per_call():
    """onnx's test_loop11 feeds M and cond as graph inputs: the backend imports one program per value."""
    (case,) = conformance.node_cases("test_loop11", ("loop",))
    assert conformance.run_case(case, conformance.paddlectl_prepare) == ("pass", "")
    rep = PaddlectlBackend.prepare(case.model)
    ref = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
    for m in (0, 2, 5):
        feeds = {"trip_count": np.array(m, np.int64), "cond": np.array(True), "y": np.array([-2], np.float32)}
        for o, r in zip(rep.run(feeds), ref.run(None, feeds), strict=True):
            assert o.shape == r.shape
            np.testing.assert_allclose(o, r)


def test_data_dependent_condition_with_scan_outputs_is_refused_by_name():
    limit = onnx.numpy_helper.from_array(np.array(0, np.float32), "limit")
    body = _accumulate_body([helper.make_node("ReduceSum", ["s_out"], ["t"], keepdims=0),
                             helper.make_node("Less", ["t", "limit"], ["cond_out"])])  # fmt: skip
    node = helper.make_node("Loop", ["M", "", "s0"], ["s", "trace"], body=body, name="L")
    model = _model([node], [_vi("x", F32, [3]), _vi("s0", F32, [3])], [_vi("s", F32, [3]), _vi("trace", F32, ["T", 3])],
                   [onnx.numpy_helper.from_array(np.array(5, np.int64), "M"), limit])  # fmt: skip
    with pytest.raises(ConversionError, match=r"'L' \(Loop\).*scan outputs.*data-dependent"):
        onnx_to_program(model)


def test_loop_without_a_trip_count_on_a_data_dependent_condition_is_refused_by_name():
    model = _doubling_model(True)
    del model.graph.node[-1].input[0]
    model.graph.node[-1].input.insert(0, "")
    with pytest.raises(ConversionError, match=r"\(Loop\): no known trip count.*depends on the input data"):
        onnx_to_program(model)


def test_loop_without_iterations_gives_empty_scan_outputs():
    body = _accumulate_body([helper.make_node("Identity", ["cond"], ["cond_out"])])
    node = helper.make_node("Loop", ["M", "", "s0"], ["s", "trace"], body=body)
    model = _model([node], [_vi("x", F32, [3]), _vi("s0", F32, [3])], [_vi("s", F32, [3]), _vi("trace", F32, ["T", 3])],
                   [onnx.numpy_helper.from_array(np.array(0, np.int64), "M")])  # fmt: skip
    feeds = {"x": RNG.standard_normal(3).astype(np.float32), "s0": RNG.standard_normal(3).astype(np.float32)}
    s, trace = _check(model, feeds)
    assert trace.shape == (0, 3)
    np.testing.assert_array_equal(s, feeds["s0"])
