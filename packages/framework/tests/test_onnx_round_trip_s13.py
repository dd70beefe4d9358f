"""Import -> export -> import (``onnx/round_trip.py``) of hand-made models for what onnx's single-node
cases leave out (``test_onnx_round_trip_s12.py`` runs those): op types without such a case, a Loop
followed on a data-dependent condition, and programs whose ops need a newer opset than 17 (the
exporter raises it: BitwiseAnd 18, Pad's wrap 19, CumProd 26), with the Reduce ops of those
opsets taking their axes as an input."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import paddlectl.framework as paddle  # noqa: E402
from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.jit import InputSpec, to_static  # noqa: E402
from paddlectl.framework.onnx.export import program_to_onnx  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.onnx.round_trip import round_trip  # noqa: E402
from paddlectl.framework.testing.onnx_models import graph_model, node_model  # noqa: E402

RNG = np.random.default_rng(31)
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _passes(model, *feeds):
    """The round trip on each feed list, its expected outputs from onnx's reference evaluator."""
    ref = ReferenceEvaluator(model)
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    data = [(list(f), ref.run(None, dict(zip(names, f, strict=True)))) for f in feeds]
    assert round_trip(model, data) == ("pass", "")


def test_mean_variance_normalization_round_trips():
    node = helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2])
    _passes(
        node_model(node, {"x": (np.float32, [2, 3, 4])}, opset=13), [RNG.standard_normal((2, 3, 4)).astype(np.float32)]
    )


def test_not_round_trips():
    node = helper.make_node("Not", ["x"], ["y"])
    _passes(node_model(node, {"x": (np.bool_, [3, 4])}), [RNG.random((3, 4)) < 0.5])


def test_loop_on_a_data_dependent_condition_round_trips():
    """while sum(s) < 100 (at most 8 times): s = 2 * s, imported as where-guarded steps."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "two"], ["s_out"]), helper.make_node("ReduceSum", ["s_out"], ["t"], keepdims=0),
         helper.make_node("Less", ["t", "limit"], ["c_out"])],
        "body", [_vi("i", I64, []), _vi("c", BOOL, []), _vi("s", F32, [3])], [_vi("c_out", BOOL, []), _vi("s_out", F32, [3])],
    )  # fmt: skip
    inits = [numpy_helper.from_array(np.array(v, d), n) for n, v, d in
             (("M", 8, np.int64), ("go", True, np.bool_), ("two", 2, np.float32), ("limit", 100, np.float32))]  # fmt: skip
    graph = helper.make_graph([helper.make_node("Loop", ["M", "go", "s0"], ["s"], body=body)], "g",
                              [_vi("s0", F32, [3])], [_vi("s", F32, [3])], initializer=inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    _passes(model, *([np.full(3, v, np.float32)] for v in (0.3, 5.0, 200.0)))


@pytest.mark.parametrize(
    ("nodes", "inputs", "inits", "opset", "written"),
    [
        (
            [helper.make_node("BitwiseAnd", ["a", "b"], ["m"]), helper.make_node("Cast", ["m"], ["f"], to=F32),
             helper.make_node("ReduceMean", ["f", "axes"], ["y"], keepdims=0)],
            {"a": (np.int32, [3, 4]), "b": (np.int32, [3, 4])}, {"axes": np.array([1], np.int64)}, 18, 18,
        ),
        (
            [helper.make_node("Pad", ["x", "pads"], ["p"], mode="wrap"),
             helper.make_node("ReduceMax", ["p", "axes"], ["y"], keepdims=1)],
            {"x": (np.float32, [3, 4])}, {"pads": np.array([1, 2, 0, 1], np.int64), "axes": np.array([0], np.int64)},
            19, 19,
        ),
        (
            [helper.make_node("CumProd", ["x", "axis"], ["c"]), helper.make_node("ReduceProd", ["c", "axes"], ["y"])],
            {"x": (np.float32, [3, 4])}, {"axis": np.array(1, np.int64), "axes": np.array([1], np.int64)}, 26, 26,
        ),
    ],
    ids=["bitwise-18", "pad-wrap-19", "cumprod-26"],
)  # fmt: skip
def test_ops_of_newer_opsets_round_trip_at_the_opset_they_need(nodes, inputs, inits, opset, written):
    model = graph_model(nodes, inputs, ["y"], inits, opset)
    feeds = [RNG.integers(-50, 50, s).astype(d) if np.dtype(d).kind == "i" else RNG.uniform(0.5, 1.5, s).astype(d)
             for d, s in inputs.values()]  # fmt: skip
    _passes(model, feeds)
    exported = program_to_onnx(onnx_to_program(model)[0])
    assert [o.version for o in exported.opset_import] == [written]
    reduce = [n for n in exported.graph.node if n.op_type.startswith("Reduce")]
    assert reduce and all(len(n.input) == 2 and not n.attribute[1:] for n in reduce)  # axes as an input


def test_a_program_of_opset_17_ops_is_written_at_17_with_axes_attributes():
    node = helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)
    model = node_model(node, {"x": (np.float32, [3, 4])}, opset=13)
    exported = program_to_onnx(onnx_to_program(model)[0])
    assert [o.version for o in exported.opset_import] == [17]
    (reduce,) = [n for n in exported.graph.node if n.op_type == "ReduceMean"]
    assert {a.name for a in reduce.attribute} == {"axes", "keepdims"}


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: paddle.as_real(paddle.fft.rfft(x)),
        lambda x: paddle.as_real(paddle.fft.fft2(x.astype("complex64"), norm="ortho")),
        lambda x: paddle.fft.irfft2(paddle.fft.rfft2(x, norm="forward") + (1 + 2j), s=[4, 7], norm="forward"),
        lambda x: paddle.as_real(paddle.fft.ihfft(x, norm="ortho")),
        lambda x: paddle.fft.hfft(paddle.fft.ifft(x.astype("complex64")), n=9),
    ],
    ids=["rfft", "fft2-ortho", "irfft2-forward", "ihfft-ortho", "hfft"],
)
def test_fft_programs_export_as_dft_nodes_on_real_imag_pairs(fn):
    import onnxruntime

    x = RNG.standard_normal((4, 7)).astype(np.float32)
    program = to_static(fn, input_spec=[InputSpec([4, 7], "float32", "x")]).concrete_program()
    model = program_to_onnx(getattr(program, "program", program))
    assert "DFT" in {n.op_type for n in model.graph.node}
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(got, fn(paddle.to_tensor(x)).numpy(), rtol=1e-4, atol=1e-4)


def test_not_equal_exports_as_not_of_equal():
    import onnxruntime

    x = np.array([[0, 3, 0, 5]], np.int64)
    program = to_static(lambda t: (t != 0).astype("int64"), input_spec=[InputSpec([1, 4], "int64", "x")])
    model = program_to_onnx(getattr(program.concrete_program(), "program", program.concrete_program()))
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(session.run(None, {session.get_inputs()[0].name: x})[0], [[0, 1, 0, 1]])


def test_a_product_of_complex_values_is_refused_by_name():
    program = to_static(lambda x: paddle.as_real(paddle.fft.fft(x.astype("complex64")) * (1 + 2j)),
                        input_spec=[InputSpec([4], "float32", "x")]).concrete_program()  # fmt: skip
    with pytest.raises(ConversionError, match="multiply on complex values has no ONNX form"):
        program_to_onnx(getattr(program, "program", program))


def test_a_complex_graph_input_is_refused_by_name():
    program = to_static(lambda z: paddle.as_real(paddle.fft.fft(z)), input_spec=[InputSpec([4], "complex64", "z")])
    with pytest.raises(ConversionError, match="input 'z' is complex.*as_real"):
        program_to_onnx(getattr(program.concrete_program(), "program", program.concrete_program()))
