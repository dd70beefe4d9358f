"""The ONNX importer on hostile files: every site the issue-29 fuzzer reached with an untyped exception
now raises OnnxImportError naming the node, attribute or initializer and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from paddlectl.framework.errors import ConversionError, OnnxImportError  # noqa: E402
from paddlectl.framework.onnx.importer import import_onnx  # noqa: E402


def _save(tmp_path, nodes, inits=(), opset=13, ir=8, elem=TensorProto.FLOAT, in_shape=("N", 4), out_shape=("N", 4)):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", elem, list(in_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out_shape))],
                              initializer=list(inits))  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _refused(path) -> str:
    with pytest.raises(OnnxImportError) as info:
        import_onnx(path)
    assert isinstance(info.value, ConversionError)  # callers catching the old type keep working
    return str(info.value)


def test_out_of_range_ir_version_and_opset_are_refused(tmp_path):
    relu = [helper.make_node("Relu", ["x"], ["y"])]
    assert "ir_version is 100; supported IR versions are 3.." in _refused(_save(tmp_path, relu, ir=100))
    assert "opset 99; supported opsets are 6..28" in _refused(_save(tmp_path, relu, opset=99))


@pytest.mark.parametrize(
    "node, expected",
    [
        (
            helper.make_node("Relu", [], ["y"], name="r"),
            "Node(r) with schema(::Relu:13) has input size 0",
        ),  # was IndexError, converters.py _unary
        (helper.make_node("MaxPool", [], ["y"], kernel_shape=[1]), "MaxPool"),  # was IndexError, _max_pool
        (helper.make_node("Reshape", ["x"], ["y"]), "Reshape"),  # was IndexError, _reshape
        (
            helper.make_node("Relu", ["x"], ["y"], name="dup"),
            "'y' has been used as output names multiple times",
        ),  # a second writer of 'y': single assignment
    ],
)
def test_nodes_the_checker_refuses_name_the_op(tmp_path, node, expected):
    nodes = [helper.make_node("Relu", ["x"], ["y"])] if node.name == "dup" else []
    text = _refused(_save(tmp_path, [*nodes, node]))
    assert "fails onnx.checker" in text and expected in text


@pytest.mark.parametrize("attr", ["pads", "kernel_shape", "dilations"])
def test_attribute_of_the_wrong_type_is_refused(tmp_path, attr):
    """Was TypeError in converters.py's _pads2d / _check_2d / _conv (an int where ints are expected)."""
    attrs = {"kernel_shape": [1, 1], attr: 1}
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="c1", **attrs)
    w = numpy_helper.from_array(np.ones((4, 4, 1, 1), np.float32), "w")
    text = _refused(_save(tmp_path, [node], [w], in_shape=("N", 4, 2, 2), out_shape=("N", 4, 2, 2)))
    assert f"'c1 : {attr}'. Expected: 'INTS', actual: 'INT'" in text


def test_maxpool_ceil_mode_before_opset_10_is_refused(tmp_path):
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1], ceil_mode=1)
    assert "ceil_mode" in _refused(_save(tmp_path, [node], opset=7))


def _gemm_with(w):
    return [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc")], [w]


def test_truncated_raw_data_names_the_initializer(tmp_path):
    """Was ValueError from onnx.numpy_helper: raw_data shorter than the dims."""
    w = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    w.raw_data = w.raw_data[:10]
    text = _refused(_save(tmp_path, *_gemm_with(w)))
    assert "tensor name: w) raw_data size (10 bytes) is too small" in text and "64 bytes required" in text


def test_unsupported_initializer_dtype_is_named(tmp_path):
    w = helper.make_tensor("w", TensorProto.STRING, [4, 4], [b"a"] * 16)
    text = _refused(_save(tmp_path, *_gemm_with(w)))
    assert "fc" in text and "Gemm" in text


def test_graph_input_of_an_unsupported_element_type_is_named(tmp_path):
    """Was KeyError in onnx.helper.tensor_dtype_to_np_dtype; a type the checker accepts but NumPy lacks
    (bfloat16 through Identity) is refused by name."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, ["N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, ["N", 4])])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "e.onnx"
    path.write_bytes(model.SerializeToString())
    assert "graph input 'x' has element type BFLOAT16; expected a tensor of one of" in _refused(path)


def test_folded_op_that_rejects_its_constants_names_the_node(tmp_path):
    """Was TypeError at builder.py (an op's forward raised while folding constant inputs)."""
    a = numpy_helper.from_array(np.ones((2, 3), np.float32), "a")
    b = numpy_helper.from_array(np.ones((4, 5), np.float32), "b")
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"), helper.make_node("Relu", ["x"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        initializer=[a, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "f.onnx"
    path.write_bytes(model.SerializeToString())
    assert "'mm'" in _refused(path) or "MatMul" in _refused(path)


def test_invalid_utf8_string_attribute_is_refused(tmp_path):
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1])
    node.attribute.append(helper.make_attribute("auto_pad", "NOTSET"))
    node.attribute[-1].s = b"\xb4\xff"
    w = numpy_helper.from_array(np.ones((4, 4, 1, 1), np.float32), "w")
    text = _refused(_save(tmp_path, [node], [w], in_shape=("N", 4, 2, 2), out_shape=("N", 4, 2, 2)))
    assert "attribute 'auto_pad' is not valid UTF-8" in text or "is not valid UTF-8 (" in text


def _resize(tmp_path, scale: float):
    sc = numpy_helper.from_array(np.float32([1, 1, scale, scale]), "sc")
    node = helper.make_node("Resize", ["x", "", "sc"], ["y"], name="up", mode="nearest",
                            coordinate_transformation_mode="asymmetric", nearest_mode="floor")  # fmt: skip
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 28, 28])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1, None, None])],
                              initializer=[sc])  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / f"resize{scale:g}.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def test_a_model_declaring_a_huge_value_is_refused_at_import(tmp_path):
    """Was a MemoryError at the first run: a Resize by 1e5 declares 7.84e12 elements per batch item."""
    text = _refused(_resize(tmp_path, 1e5))
    assert "op interpolate" in text and "onnx:up" in text and "7.84e+12 elements" in text


def test_running_out_of_memory_is_a_resource_error(tmp_path):
    """Inputs too large for the model: a typed error naming the input shapes, not a bare MemoryError."""
    from paddlectl.framework.errors import ResourceError
    from paddlectl.framework.inference import Config, create_predictor

    predictor = create_predictor(Config(str(_resize(tmp_path, 1e3))))  # 7.84e8 elements per item: accepted
    with pytest.raises(ResourceError, match=r"out of memory on inputs of shapes \[\[10000, 1, 28, 28\]\]"):
        predictor.run([np.zeros((10000, 1, 28, 28), np.float32)])  # 31 TB of output: refused by the allocator
