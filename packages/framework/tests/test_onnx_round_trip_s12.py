"""Import -> export -> import for every ONNX op type with both rules (``onnx/round_trip.py``), on
the single-node cases of onnx's own node suite, and the list of op types that import but do not
export (the framework README lists them), kept true."""

from __future__ import annotations

import collections
import importlib
import pkgutil

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import paddlectl.framework as paddle  # noqa: E402
from paddlectl.framework.errors import ConversionError  # noqa: E402
from paddlectl.framework.jit import InputSpec, to_static  # noqa: E402
from paddlectl.framework.onnx import conformance  # noqa: E402
from paddlectl.framework.onnx.converters import RULES  # noqa: E402
from paddlectl.framework.onnx.export import program_to_onnx  # noqa: E402
from paddlectl.framework.onnx.round_trip import round_trip  # noqa: E402

CASES_PER_TYPE = 3
IMPORT_ONLY = {
    "BitCast", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "CumProd", "InstanceNormalization",
    "LayerNormalization", "LpNormalization", "NegativeLogLikelihoodLoss", "NonMaxSuppression", "NonZero",
    "ReduceLogSumExp", "Scatter", "ScatterElements", "ScatterND", "SoftmaxCrossEntropyLoss",
}  # fmt: skip
"""Op types whose imported single-node cases hold an op with no export rule (the README's list)."""
NOT_ROUND_TRIPPED = {"MeanVarianceNormalization", "Not"}
"""Op types with no single-node case that imports here, so the suite does not exercise their round trip."""


@pytest.fixture(scope="module")
def outcomes() -> dict:
    """op type -> Counter of round-trip outcomes over its first single-node in-scope cases."""
    import onnx.backend.test.case.node as package
    from onnx.backend.test.case.node import _NodeTestCases

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    by_type: dict = collections.defaultdict(list)
    for case in sorted(_NodeTestCases, key=lambda c: c.name):
        types = {n.op_type for n in case.model.graph.node}
        if len(types) == 1 and next(iter(types)) in RULES and conformance.out_of_scope(case.model) is None:
            by_type[next(iter(types))].append(case)
    result = {}
    with np.errstate(all="ignore"):
        for op_type, cases in by_type.items():
            result[op_type] = collections.Counter(
                round_trip(c.model, conformance._data(c), c.rtol, c.atol)[0] for c in cases[:CASES_PER_TYPE]
            )
    return result


def test_every_op_type_with_both_rules_round_trips(outcomes):
    both = set(RULES) - IMPORT_ONLY - NOT_ROUND_TRIPPED
    covered = both & set(outcomes)
    assert len(covered) >= 131, sorted(both - set(outcomes))
    failing = {t: dict(outcomes[t]) for t in covered if not outcomes[t]["pass"]}
    assert not failing, failing
    wrong = {t: dict(c) for t, c in outcomes.items() if c["wrong result"]}
    assert not wrong, wrong


def test_import_only_list_is_true(outcomes):
    """Each listed type imports but its program has an op without an export rule; a type that
    gains its export rule must leave the list (and the README's)."""
    exporting = {t for t in IMPORT_ONLY if outcomes.get(t, {}).get("pass")}
    assert not exporting, sorted(exporting)
    assert all(outcomes[t]["no export"] for t in IMPORT_ONLY if t in outcomes)


def test_checker_failure_on_export_is_a_typed_error():
    """A dtype ONNX's opset-17 op does not take (Celu on float16) was an untyped InferenceError."""
    program = to_static(paddle.nn.functional.celu, input_spec=[InputSpec([2, 3], "float16", "x")]).concrete_program()
    with pytest.raises(ConversionError, match="fails onnx.checker.*Celu"):
        program_to_onnx(program)
