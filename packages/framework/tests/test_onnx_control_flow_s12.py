"""If and Scan import (inlined: a branch or ``where`` over both; Scan unrolled over its fixed
length) against onnxruntime, and their refusals by name."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.importer import onnx_to_program  # noqa: E402
from paddlectl.framework.testing.onnx_models import node_model  # noqa: E402

RNG = np.random.default_rng(12)
F32 = TensorProto.FLOAT


def _branch(name: str, op: str, shape) -> onnx.GraphProto:
    """A branch computing ``op(x, x)`` from the outer scope's ``x``."""
    return helper.make_graph(
        [helper.make_node(op, ["x", "x"], [f"{name}_out"])], name, [],
        [helper.make_tensor_value_info(f"{name}_out", F32, shape)],
    )  # fmt: skip


def _check(model, feeds: dict):
    ours = PaddlectlBackend.prepare(model).run(list(feeds.values()))
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for o, r in zip(ours, ref, strict=True):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_a_data_dependent_condition_equals_onnxruntime(flag):
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("then", "Add", [2, 3]),
                            else_branch=_branch("else", "Mul", [2, 3]))  # fmt: skip
    model = node_model(node, {"c": (np.bool_, []), "x": (np.float32, [2, 3])}, opset=13)
    _check(model, {"c": np.array(flag), "x": RNG.standard_normal((2, 3)).astype(np.float32)})


def test_if_with_a_constant_condition_is_its_branch():
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("then", "Add", [2, 3]),
                            else_branch=_branch("else", "Mul", [2, 3]))  # fmt: skip
    model = node_model(node, {"x": (np.float32, [2, 3])}, {"c": np.array(False)}, opset=13)
    program, _ = onnx_to_program(model)
    assert "where" not in {op.name for op in program.walk()}
    _check(model, {"x": RNG.standard_normal((2, 3)).astype(np.float32)})


def test_if_with_branches_of_different_shapes_is_refused_by_name():
    other = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [],
        [helper.make_tensor_value_info("e", F32, [4, 3])],
    )  # fmt: skip
    node = helper.make_node("If", ["c"], ["y"], then_branch=_branch("then", "Add", [2, 3]), else_branch=other)
    with pytest.raises(ConversionError, match=r"\(If\).*equal shapes"):
        onnx_to_program(node_model(node, {"c": (np.bool_, []), "x": (np.float32, [2, 3])}, opset=13))


@pytest.mark.parametrize(("direction", "out_axis"), [(0, 0), (1, 1)])
def test_scan_running_sum_and_product_equal_onnxruntime(direction, out_axis):
    """States (sum, product) threaded through the steps; per step the scaled input and the sum."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Mul", ["p_in", "row"], ["p_out"]),
         helper.make_node("Mul", ["row", "w"], ["scaled"]), helper.make_node("Identity", ["s_out"], ["s_seen"])],
        "body",
        [helper.make_tensor_value_info(n, F32, [3]) for n in ("s_in", "p_in", "row")],
        [helper.make_tensor_value_info(n, F32, [3]) for n in ("s_out", "p_out", "scaled", "s_seen")],
    )  # fmt: skip
    node = helper.make_node(
        "Scan", ["s0", "p0", "xs"], ["s", "p", "ys", "sums"], body=body, num_scan_inputs=1,
        scan_input_directions=[direction], scan_output_axes=[out_axis, 0],
    )  # fmt: skip
    model = node_model(node, {"s0": (np.float32, [3]), "p0": (np.float32, [3]), "xs": (np.float32, [4, 3]),
                              "w": (np.float32, [3])}, opset=16)  # fmt: skip
    feeds = {n: RNG.standard_normal(s).astype(np.float32) for n, s in (("s0", 3), ("p0", 3), ("xs", (4, 3)), ("w", 3))}
    _check(model, feeds)


def test_scan_body_with_an_op_without_rule_is_refused_by_name():
    body = helper.make_graph(
        [helper.make_node("Unique", ["row"], ["u"])], "body", [helper.make_tensor_value_info("row", F32, [3])],
        [helper.make_tensor_value_info("u", F32, None)],
    )  # fmt: skip
    node = helper.make_node("Scan", ["xs"], ["ys"], body=body, num_scan_inputs=1)
    with pytest.raises(ConversionError, match="Unique, which has no import rule"):
        onnx_to_program(node_model(node, {"xs": (np.float32, [2, 3])}, opset=16))
