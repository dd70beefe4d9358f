"""What the ONNX importer still cannot take is refused with a typed error that names the node or
value and the reason (never a TypeError/ValueError/KeyError from deep inside a rule): hand-made
models of each kind, through the file importer and the backend alike."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from paddlectl.framework.errors import PaddlectlError  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import import_onnx  # noqa: E402

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=17, domains=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    imports = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    return model


def _loop(body_nodes, body_outputs, carried=("s0",), trip=3):
    body = helper.make_graph(body_nodes, "body", [_vi("i", I64, []), _vi("c", BOOL, []), _vi("s", F32, [2])],
                             body_outputs)  # fmt: skip
    return _model(
        [helper.make_node("Loop", ["M", "", *carried], ["out"], body=body, name="the_loop")],
        [_vi("s0", F32, [2])], [_vi("out", F32, [2])], [numpy_helper.from_array(np.array(trip, np.int64), "M")],
    )  # fmt: skip


def _sequence_model():
    node = helper.make_node("SequenceConstruct", ["x", "x"], ["seq"], name="make_seq")
    at = helper.make_node("SequenceAt", ["seq", "zero"], ["y"], name="pick")
    return _model([node, at], [_vi("x", F32, [2])], [_vi("y", F32, [2])],
                  [numpy_helper.from_array(np.array(0, np.int64), "zero")])  # fmt: skip


def _custom_domain_model():
    node = helper.make_node("FusedGelu", ["x"], ["y"], domain="com.example", name="fused")
    return _model([node], [_vi("x", F32, [2])], [_vi("y", F32, [2])], domains=("com.example",))


def _string_model():
    node = helper.make_node("Identity", ["x"], ["y"], name="ident")
    return _model([node], [_vi("x", TensorProto.STRING, [2])], [_vi("y", TensorProto.STRING, [2])])


def _data_dependent_reshape_model():
    """Reshape to a shape computed from float data (no integer input to bind per call)."""
    nodes = [
        helper.make_node("Cast", ["t"], ["ti"], to=I64),
        helper.make_node("Reshape", ["x", "ti"], ["y"], name="rs"),
    ]
    return _model(nodes, [_vi("x", F32, [4]), _vi("t", F32, [2])], [_vi("y", F32, [2, 2])])


def _symbolic_scan_model():
    body = helper.make_graph([helper.make_node("Add", ["s", "row"], ["s_out"])], "body",
                             [_vi("s", F32, [2]), _vi("row", F32, [2])], [_vi("s_out", F32, [2])])  # fmt: skip
    node = helper.make_node("Scan", ["s0", "xs"], ["s"], body=body, num_scan_inputs=1, name="scan")
    return _model([node], [_vi("s0", F32, [2]), _vi("xs", F32, ["T", 2])], [_vi("s", F32, [2])])


def _loop_with_unmapped_body_op():
    return _loop([helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Unique", ["s"], ["s_out"])],
                 [_vi("c_out", BOOL, []), _vi("s_out", F32, [2])])  # fmt: skip


def _loop_growing_a_carried_value_on_data():
    """A data-dependent condition with a loop-carried value whose shape changes per iteration."""
    nodes = [helper.make_node("Concat", ["s", "s"], ["s_out"], axis=0),
             helper.make_node("ReduceSum", ["s_out"], ["t"], keepdims=0),
             helper.make_node("Less", ["t", "limit"], ["c_out"])]  # fmt: skip
    model = _loop(nodes, [_vi("c_out", BOOL, []), _vi("s_out", F32, ["K"])])
    model.graph.initializer.append(numpy_helper.from_array(np.array(10, np.float32), "limit"))
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "K"
    return model


def _unbounded_loop():
    nodes = [helper.make_node("Add", ["s", "s"], ["s_out"]), helper.make_node("ReduceSum", ["s_out"], ["t"], keepdims=0),
             helper.make_node("Less", ["t", "limit"], ["c_out"])]  # fmt: skip
    model = _loop(nodes, [_vi("c_out", BOOL, []), _vi("s_out", F32, [2])])
    model.graph.initializer.append(numpy_helper.from_array(np.array(10, np.float32), "limit"))
    model.graph.node[0].input[0] = ""
    return model


def _if_with_branches_of_different_dtypes():
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [], [_vi("a", F32, [2])])
    other = helper.make_graph([helper.make_node("Cast", ["x"], ["b"], to=I64)], "else", [], [_vi("b", I64, [2])])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other, name="branch")
    return _model([node], [_vi("c", BOOL, []), _vi("x", F32, [2])], [_vi("y", F32, [2])])


def _training_dropout():
    node = helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
        numpy_helper.from_array(np.array(True), "train"),
    ]
    return _model([node], [_vi("x", F32, [2])], [_vi("y", F32, [2])], inits)


CASES = {
    "sequence ops": (_sequence_model, r"SequenceConstruct is not supported"),
    "custom domain": (_custom_domain_model, r"domain 'com\.example' is not supported"),
    "string tensors": (_string_model, r"STRING"),
    "data-dependent reshape": (_data_dependent_reshape_model, r"'rs' \(Reshape\).*must be a constant"),
    "scan over a symbolic length": (_symbolic_scan_model, r"'scan' \(Scan\).*one fixed length"),
    "loop body op without a rule": (
        _loop_with_unmapped_body_op,
        r"'the_loop' \(Loop\).*Unique, which has no import rule",
    ),
    "loop growing a value on data": (_loop_growing_a_carried_value_on_data, r"'the_loop' \(Loop\).*keep its shape"),
    "loop without a trip count": (_unbounded_loop, r"'the_loop' \(Loop\).*no known trip count"),
    "if branches of two dtypes": (
        _if_with_branches_of_different_dtypes,
        r"node name: branch.*Mismatched tensor element type",
    ),
    "training dropout": (_training_dropout, r"'drop' \(Dropout\).*training_mode"),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_unsupported_model_is_refused_by_name(kind, tmp_path):
    make, expected = CASES[kind]
    path = tmp_path / "m.onnx"
    path.write_bytes(make().SerializeToString())
    with pytest.raises(PaddlectlError, match=expected):
        import_onnx(path)
    with pytest.raises(PaddlectlError, match=expected):
        PaddlectlBackend.prepare(make()).run([np.zeros(i.type.tensor_type.shape.dim[0].dim_value or 2, np.float32)
                                              for i in make().graph.input])  # fmt: skip
