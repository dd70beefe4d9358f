"""ONNX's own node conformance cases through paddlectl (``onnx.backend.test``): the Backend works
under onnx's BackendTest, every case of the op families the importer maps passes against onnx's
reference outputs (except the listed, reasoned refusals), and the runner reports counts."""

from __future__ import annotations

import os
import unittest

import pytest

onnx = pytest.importorskip("onnx")

from onnx.backend.test import BackendTest, runner  # noqa: E402

from paddlectl.framework.onnx import conformance  # noqa: E402
from paddlectl.framework.onnx.backend import PaddlectlBackend  # noqa: E402
from paddlectl.framework.onnx.import_rules import FAMILY_RULES  # noqa: E402

MODULES = (
    "abs", "acos", "acosh", "and_", "argmax", "argmin", "asin", "asinh", "atan", "atanh", "bitshift", "bitwiseand",
    "bitwisenot", "bitwiseor", "bitwisexor", "castlike", "ceil", "celu", "clip", "constantofshape", "cos", "cosh",
    "cumprod", "cumsum", "depthtospace", "det", "dropout", "einsum", "elu", "equal", "erf", "expand", "eyelike",
    "floor", "gather", "gatherelements", "gathernd", "gelu", "globalaveragepool", "globalmaxpool", "greater",
    "greater_or_equal", "hardmax", "hardswish", "instance_normalization", "isinf", "isnan", "layernormalization",
    "leakyrelu", "less", "less_or_equal", "log", "logsoftmax", "lpnormalization", "lrn", "max", "mean",
    "meanvariancenormalization", "min", "mish", "mod", "negativeloglikelihoodloss", "nonzero", "not_", "onehot",
    "or_", "pad", "prelu", "rangeop", "reciprocal", "reduce_log_sum", "reduce_log_sum_exp", "reducel1", "reducel2",
    "reducemax", "reducemean", "reducemin", "reduceprod", "reducesum", "reducesumsquare", "rmsnormalization",
    "round", "scatterelements", "scatternd", "selu", "shrink", "sign", "sin", "sinh", "size", "softmax",
    "softmax_cross_entropy_loss", "softplus", "softsign", "spacetodepth", "split", "sum", "swish", "tan",
    "thresholdedrelu", "tile", "topk", "trilu", "where", "xor", "quantizelinear", "dequantizelinear", "bitcast", "qlinearmatmul", "matmulinteger", "scatter", "convinteger", "qlinearconv",
)  # fmt: skip
"""The case modules of the ops ``onnx/import_rules`` maps (onnx names some with a trailing ``_``)."""

REFUSED = {
    "test_gathernd_example_int32_batch_dim1": "GatherND batch_dims=1 is refused by name",
    "test_scatternd_max": "ScatterND reduction=max is refused by name",
    "test_scatternd_max_with_element_indices": "ScatterND reduction=max is refused by name",
    "test_scatternd_min": "ScatterND reduction=min is refused by name",
    "test_scatternd_min_with_element_indices": "ScatterND reduction=min is refused by name",
    "test_scatternd_multiply": "ScatterND reduction=mul is refused by name",
    "test_training_dropout": "training-mode Dropout with ratio > 0 draws a random mask: refused",
    "test_training_dropout_default": "training-mode Dropout with ratio > 0 draws a random mask: refused",
    "test_training_dropout_default_mask": "training-mode Dropout with ratio > 0 draws a random mask: refused",
    "test_training_dropout_mask": "training-mode Dropout with ratio > 0 draws a random mask: refused",
    "test_dequantizelinear_blocked": "blocked quantisation is refused by name",
    "test_quantizelinear_blocked_asymmetric": "blocked quantisation is refused by name",
    "test_quantizelinear_blocked_symmetric": "blocked quantisation is refused by name",
    "test_not_2d": "opset 1 is outside the supported 6..28",
    "test_not_3d": "opset 1 is outside the supported 6..28",
    "test_not_4d": "opset 1 is outside the supported 6..28",
    "test_mvn": "onnx.checker rejects the case's own function body (a Constant with two value attributes)",
}
"""Cases of mapped ops that do not pass, each for the reason given (kept true by the test below)."""


@pytest.fixture(scope="module")
def family_cases():
    cases = conformance.node_cases(modules=MODULES)
    return [c for c in cases if c.model.graph.node[0].op_type in {*FAMILY_RULES, "ConvInteger", "QLinearConv"}]


def test_mapped_op_families_pass_onnx_node_cases(family_cases):
    assert len(family_cases) > 600
    results = conformance.run_suite(family_cases, conformance.paddlectl_prepare)
    failing = {
        name: f"{outcome}: {detail}"
        for name, (outcome, detail) in results.items()
        if outcome != "pass" and outcome != "refused: dtype" and name not in REFUSED
    }
    assert not failing, failing
    stale = sorted(name for name in REFUSED if results.get(name, ("pass",))[0] == "pass")
    assert not stale, f"these now pass: drop them from REFUSED: {stale}"
    untyped = {n: d for n, (o, d) in results.items() if o.startswith("untyped") and n not in REFUSED}
    assert not untyped


def test_unsupported_element_types_are_refused_with_the_typed_error(family_cases):
    """bfloat16 cases (inputs/outputs of a type with no NumPy dtype) are refused, by name, never a TypeError."""
    bf16 = [c for c in family_cases if "bfloat16" in c.name]
    assert bf16
    results = conformance.run_suite(bf16, conformance.paddlectl_prepare)
    assert {o for o, _ in results.values()} == {"refused: dtype"}, results
    assert all("BFLOAT16" in d for _, d in results.values())


def test_onnx_backend_test_drives_the_backend(family_cases, monkeypatch):
    """``onnx.backend.test.BackendTest`` (onnx's own harness) runs our Backend; it is handed the
    already generated cases (generating all 1,884 takes half a minute)."""
    monkeypatch.setattr(
        runner, "load_model_tests", lambda data_dir=None, kind=None: family_cases if kind == "node" else []
    )
    suite = BackendTest(PaddlectlBackend, __name__)
    suite.include(
        r"^test_(cumsum_1d_reverse_exclusive|tril_neg|onehot_negative_indices|argmax_default_axis_example)_cpu$"
    )
    cases = unittest.defaultTestLoader.loadTestsFromTestCase(suite.test_cases["OnnxBackendNodeModelTest"])
    result = unittest.TextTestRunner(verbosity=0, stream=open("/dev/null", "w")).run(cases)  # noqa: SIM115
    assert result.testsRun - len(result.skipped) == 4  # the rest are skipped: not included
    assert result.wasSuccessful(), result.failures + result.errors


def test_runner_prints_counts_per_outcome(capsys):
    assert conformance.main(["-k", "test_cumsum_1d", "--module", "cumsum"]) == 0
    out = capsys.readouterr().out
    assert "pass" in out and "node cases" in out


def test_runner_refuses_an_empty_selection(capsys):
    with pytest.raises(SystemExit) as info:
        conformance.main(["-k", "no_such_case_name", "--module", "cumsum"])
    assert info.value.code == 2


FUNCTION_OPS = {"SwiGLU": "swiglu", "RotaryEmbedding": "rotaryembedding", "GroupNormalization": "groupnormalization",
                "Attention": "attention", "CausalConvWithState": "causal_conv_with_state", "HannWindow": "hannwindow",
                "CenterCropPad": "center_crop_pad"}  # fmt: skip


def test_function_ops_expand_into_their_bodies():
    """Ops ONNX defines as functions and no rule maps (Attention...) import as their bodies."""
    cases = [
        c
        for c in conformance.node_cases(modules=tuple(FUNCTION_OPS.values()))
        if c.model.graph.node[0].op_type in FUNCTION_OPS
    ]
    results = conformance.run_suite(cases, conformance.paddlectl_prepare)
    known = {
        "test_attention_4d_causal_fp16": "float16 rounding: one element 1 ulp (4.9e-4) off; the case's atol is 1e-7"
    }
    failing = {n: r for n, r in results.items() if r[0] not in ("pass", "refused: dtype") and n not in known}
    assert len(cases) > 100 and not failing, failing


def test_resize_modes_pass_onnx_node_cases():
    """Every Resize mode but tf_crop_and_resize and the keep-aspect-ratio policies (refused by name)."""
    cases = [c for c in conformance.node_cases(modules=("resize",)) if c.model.graph.node[0].op_type == "Resize"]
    results = conformance.run_suite(cases, conformance.paddlectl_prepare)
    refused = {n for n, (o, _) in results.items() if o == "refused: attribute/opset"}
    assert all("tf_crop_and_resize" in n or "not_larger" in n or "not_smaller" in n for n in refused), refused
    failing = {n: r for n, r in results.items() if r[0] != "pass" and n not in refused}
    assert len(results) > 30 and not failing, failing


def test_pytorch_exported_cases_pass():
    """The PyTorch-exported models the onnx wheel ships (opsets 6..12: legacy ``broadcast``/``axis``,
    ``is_test``, per-channel PRelu, 3-D convolutions and pools, dilated pooling): all of them pass."""
    results = {os.path.basename(p): conformance.run_pytorch_case(p) for p in conformance.pytorch_cases()}
    failing = {n: r for n, r in results.items() if r[0] != "pass"}
    assert len(results) == 117 and not failing, failing
