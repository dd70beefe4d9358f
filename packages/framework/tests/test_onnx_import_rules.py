"""ONNX import rules against onnxruntime on random inputs (the cases onnx's node suite does not
cover), the fixed defects, the typed refusals, the backend's per-call binding of shape inputs and
the model-zoo classics shipped in the onnx wheel."""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from paddlectl.framework.errors import ConversionError, OnnxImportError  # noqa: E402
from paddlectl.framework.onnx import conformance  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import graph_model  # noqa: E402

RNG = np.random.default_rng(0)


def _model(nodes, feeds: dict, outputs: list, initializers=(), opset: int = 17):
    inputs = {n: (a.dtype, a.shape) for n, a in feeds.items()}
    return graph_model(nodes, inputs, outputs, dict(initializers), opset)


def _check(nodes, feeds: dict, outputs: list, initializers=(), opset: int = 17, rtol=1e-5, atol=1e-6) -> list:
    """Ours (through the Backend) against onnxruntime on the same feeds; returns our outputs."""
    model = _model(nodes, feeds, outputs, initializers, opset)
    ours = PaddlectlBackend.prepare(model).run(list(feeds.values()))
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for o, r in zip(ours, ref, strict=True):
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, o.dtype, r.shape, r.dtype)
        np.testing.assert_allclose(o, r, rtol=rtol, atol=atol)
    return list(ours)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ----- fixed defects --------------------------------------------------------------------------------


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_padding_gives_input_times_stride(auto_pad):
    """auto_pad=SAME_UPPER made 5 where ONNX makes 6 (input 3, stride 2, kernel 3)."""
    w = _f32(2, 3, 3, 3)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], auto_pad=auto_pad)
    (y,) = _check([node], {"x": _f32(1, 2, 3, 4)}, ["y"], [("w", w)])
    assert y.shape == (1, 3, 6, 8)


def test_conv_transpose_output_shape():
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], output_shape=[10, 8])
    (y,) = _check([node], {"x": _f32(1, 1, 3, 3)}, ["y"], [("w", _f32(1, 2, 3, 3))])
    assert y.shape == (1, 2, 10, 8)


def test_resize_to_sizes_runs():
    """Resize with ``sizes`` (no scales) failed at run with an untyped TypeError inside interpolate."""
    sizes = np.array([1, 2, 5, 3], np.int64)
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")
    _check([node], {"x": _f32(1, 2, 4, 6)}, ["y"], [("sizes", sizes)], opset=13)


def test_integer_div_truncates_and_pow_keeps_the_base_type():
    a = np.array([[7, -7, 9], [-9, 5, -5]], np.int32)
    b = np.array([2, 2, -4], np.int32)
    (q,) = _check([helper.make_node("Div", ["a", "b"], ["q"])], {"a": a, "b": b}, ["q"])
    assert q.dtype == np.int32
    x = np.abs(_f32(2, 3)) + 0.5
    (p,) = _check([helper.make_node("Pow", ["x", "e"], ["p"])], {"x": x, "e": np.array([1, 2, 3], np.int64)}, ["p"])
    assert p.dtype == np.float32


# ----- converters on random inputs ------------------------------------------------------------------


def test_layer_normalization_with_broadcast_scale_and_statistics():
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=-2, epsilon=1e-3)
    _check([node], {"x": _f32(2, 3, 4, 5)}, ["y", "mean", "inv"], [("s", _f32(1, 5)), ("b", _f32(4, 5))], rtol=1e-4)


def test_one_dimensional_conv_and_pools():
    nodes = [
        helper.make_node("Conv", ["x", "w", "bias"], ["c"], pads=[1, 2], strides=[2], dilations=[2]),
        helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2], strides=[1]),
        helper.make_node("AveragePool", ["m"], ["y"], kernel_shape=[3], pads=[1, 1]),
    ]
    _check(nodes, {"x": _f32(2, 3, 17)}, ["c", "y"], [("w", _f32(4, 3, 3)), ("bias", _f32(4))], rtol=1e-4)


def test_float16_conv_runs_in_float32():
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    x, w = _f32(1, 2, 5, 5).astype(np.float16), _f32(3, 2, 3, 3).astype(np.float16)
    _check([node], {"x": x}, ["y"], [("w", w)], rtol=1e-2, atol=1e-2)


def test_composite_rules_against_onnxruntime():
    """Rules made of several framework ops: each against onnxruntime on one random input."""
    x, idx = _f32(3, 4, 5), np.array([[0, 3], [-1, 9]], np.int64)
    nodes = [
        helper.make_node("Hardmax", ["x"], ["hard"], axis=1),
        helper.make_node("LogSoftmax", ["x"], ["logsm"], axis=0),
        helper.make_node("ReduceLogSumExp", ["x", "axes"], ["lse"], keepdims=0),
        helper.make_node("ReduceL2", ["x", "axes"], ["l2"]),
        helper.make_node("CumSum", ["x", "one"], ["cum"], exclusive=1, reverse=1),
        helper.make_node("Softsign", ["x"], ["softsign"]),
        helper.make_node("Asinh", ["x"], ["asinh"]),
        helper.make_node("Shrink", ["x"], ["shrink"], lambd=0.7, bias=0.2),
        helper.make_node("PRelu", ["x", "slope"], ["prelu"]),
        helper.make_node("OneHot", ["idx", "depth", "values"], ["hot"], axis=0),
        helper.make_node("Mean", ["x", "x", "slope"], ["mean3"]),
        helper.make_node("Clip", ["idx", "lo", "hi"], ["clip_int"]),
    ]
    inits = [("axes", np.array([2, 0], np.int64)), ("one", np.array(1, np.int64)), ("slope", _f32(5)),
             ("depth", np.array(5, np.int64)), ("values", np.array([-1.0, 2.0], np.float32)),
             ("lo", np.array(0, np.int64)), ("hi", np.array(4, np.int64))]  # fmt: skip
    outs = ["hard", "logsm", "lse", "l2", "cum", "softsign", "asinh", "shrink", "prelu", "hot", "mean3", "clip_int"]
    _check(nodes, {"x": x, "idx": idx}, outs, inits, opset=18, rtol=1e-4, atol=1e-5)


def test_loss_rules_against_onnxruntime():
    scores, labels = _f32(4, 3, 2), RNG.integers(0, 3, (4, 2)).astype(np.int64)
    labels[0, 0] = 1
    nodes = [
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["sce", "logp"], ignore_index=1),
        helper.make_node("NegativeLogLikelihoodLoss", ["logp", "t"], ["nll"], reduction="none"),
    ]
    _check(nodes, {"x": scores, "t": labels}, ["sce", "logp", "nll"], [("w", np.abs(_f32(3)))], rtol=1e-4)


def test_per_axis_quantize_dequantize_against_onnxruntime():
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], axis=1),
        helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], axis=1),
    ]
    inits = [("scale", np.array([0.02, 0.05, 0.1], np.float32)), ("zp", np.array([0, -3, 7], np.int8))]
    q, _ = _check(nodes, {"x": _f32(2, 3, 4) * 3}, ["q", "y"], inits, opset=13)
    assert q.dtype == np.int8 and q.min() == -128  # saturated


# ----- refusals ---------------------------------------------------------------------------------------


def test_unsupported_element_types_and_values_are_all_named_before_conversion():
    nodes = [
        helper.make_node("Cast", ["x"], ["bf"], to=TensorProto.BFLOAT16, name="to_bf16"),
        helper.make_node("Cast", ["bf"], ["y"], to=TensorProto.FLOAT),
        helper.make_node("SequenceConstruct", ["x", "x"], ["seq"], name="seq"),
    ]
    model = _model(nodes, {"x": _f32(2)}, ["y"])
    model.graph.output.append(helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, None))
    with pytest.raises(OnnxImportError) as info:
        onnx_to_program(model)
    text = str(info.value)
    assert "'to_bf16' (Cast): attribute 'to' has element type BFLOAT16" in text
    assert "'seq' (SequenceConstruct, opset 17): op type SequenceConstruct is not supported" in text
    assert "value 'seq' is a sequence" in text


def test_float8_constant_is_refused_with_the_typed_error():
    value = helper.make_tensor("v", TensorProto.FLOAT8E4M3FN, [1], [1.0])
    nodes = [helper.make_node("Constant", [], ["f8"], value=value), helper.make_node("Cast", ["f8"], ["y"], to=1)]
    with pytest.raises(OnnxImportError, match="attribute 'value' has element type FLOAT8E4M3FN"):
        PaddlectlBackend.prepare(_model(nodes, {}, ["y"], opset=19))


def test_unknown_string_attribute_values_are_refused_by_name():
    """onnx.checker does not check string attribute values; a Pad mode 'bogus' was a KeyError."""
    nodes = [helper.make_node("Pad", ["x", "pads"], ["y"], mode="bogus", name="odd_pad")]
    model = _model(nodes, {"x": _f32(2, 3)}, ["y"], [("pads", np.array([0, 1, 0, 1], np.int64))])
    with pytest.raises(OnnxImportError, match="'odd_pad' \\(Pad, opset 17\\): mode='bogus' is not supported"):
        PaddlectlBackend.prepare(model)


def test_training_ops_are_refused_by_domain():
    node = helper.make_node("Gradient", ["x"], ["g"], domain="ai.onnx.preview.training", xs=["x"], y="x")
    model = _model([helper.make_node("Relu", ["x"], ["y"])], {"x": _f32(2)}, ["y"])
    model.graph.node.append(node)
    model.opset_import.append(helper.make_opsetid("ai.onnx.preview.training", 1))
    with pytest.raises(OnnxImportError, match="operator domain 'ai.onnx.preview.training' is not supported"):
        PaddlectlBackend.prepare(model)


# ----- the backend ------------------------------------------------------------------------------------


def test_backend_binds_shape_inputs_per_call():
    """A Reshape target fed as an input is bound per call: one program per distinct value."""
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"])], {"x": _f32(2, 6), "shape": np.array([3, 4], np.int64)}, ["y"])  # fmt: skip
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"]))
    rep = PaddlectlBackend.prepare(model)
    x = _f32(2, 6)
    np.testing.assert_array_equal(rep.run([x, np.array([3, 4], np.int64)])[0], x.reshape(3, 4))
    np.testing.assert_array_equal(rep.run({"x": x, "shape": np.array([4, -1], np.int64)})[0], x.reshape(4, 3))


def test_backend_binds_the_integer_inputs_a_size_is_computed_from():
    """Range's limit is n + 1 for an input n: n is bound (a float input x is not)."""
    nodes = [
        helper.make_node("Add", ["n", "one"], ["limit"]),
        helper.make_node("Range", ["zero", "limit", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["rf"], ["total"], keepdims=0),
        helper.make_node("Mul", ["x", "total"], ["y"]),
    ]
    inits = [("one", np.array(1, np.int64)), ("zero", np.array(0, np.int64))]
    model = _model(nodes, {"x": _f32(3), "n": np.array(4, np.int64)}, ["y"], inits, opset=13)
    rep = PaddlectlBackend.prepare(model)
    x = _f32(3)
    for n in (4, 6):
        np.testing.assert_allclose(rep.run([x, np.array(n, np.int64)])[0], x * sum(range(n + 1)), rtol=1e-6)


def test_backend_refuses_a_wrong_feed_count_and_device():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], {"x": _f32(2)}, ["y"])
    with pytest.raises(ConversionError, match="device 'CUDA' is not supported"):
        PaddlectlBackend.prepare(model, "CUDA")
    with pytest.raises(ValueError, match="takes 1 inputs"):
        PaddlectlBackend.prepare(model).run([_f32(2), _f32(2)])


# ----- the model zoo ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["light_squeezenet.onnx", "light_shufflenet.onnx"])
def test_model_zoo_classics_match_onnxruntime(name):
    """Two of the nine (all nine run in the onnx_conformance nox session: VGG-19 alone takes 25 s)."""
    path = next(p for p in conformance.zoo_models() if os.path.basename(p) == name)
    outcome, detail = conformance.run_zoo_model(path)
    assert outcome == "pass", detail
