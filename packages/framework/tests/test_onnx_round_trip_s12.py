"""Import -> export -> import for every ONNX op type with an import rule (``onnx/round_trip.py``), on
every single-node case of onnx's own node suite: each type round-trips (the types without such a
case on hand-made models in ``test_onnx_round_trip_s13.py``), and no op the importer maps onto
lacks an export rule (issue 32's "every op that imports also exports")."""

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

BY_HAND = {"MeanVarianceNormalization", "Not"}
"""Op types whose single-node cases do not import here (test_mvn's function body holds an empty
Constant, test_not_* declare opset 1): test_onnx_round_trip_s13.py round-trips hand-made models."""


@pytest.fixture(scope="module")
def outcomes() -> dict:
    """op type -> [(case, outcome, detail)] over its single-node in-scope cases."""
    import onnx.backend.test.case.node as package
    from onnx.backend.test.case.node import _NodeTestCases

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    by_type: dict = collections.defaultdict(list)
    for case in sorted(_NodeTestCases, key=lambda c: c.name):
        types = {n.op_type for n in case.model.graph.node}
        if len(types) == 1 and next(iter(types)) in RULES and conformance.out_of_scope(case.model) is None:
            by_type[next(iter(types))].append(case)
    with np.errstate(all="ignore"):
        return {
            op_type: [(c.name, *round_trip(c.model, conformance._data(c), c.rtol, c.atol)) for c in cases]
            for op_type, cases in by_type.items()
        }


def test_every_op_type_with_an_import_rule_round_trips(outcomes):
    uncovered = set(RULES) - set(outcomes) - BY_HAND
    assert not uncovered, sorted(uncovered)
    assert not BY_HAND & {t for t, rows in outcomes.items() if any(o == "pass" for _, o, _ in rows)}, (
        "a BY_HAND type round-trips on its own cases now: take it off the list"
    )
    failing = sorted(t for t, rows in outcomes.items() if t not in BY_HAND and all(o != "pass" for _, o, _ in rows))
    assert not failing, failing
    wrong = [row for rows in outcomes.values() for row in rows if row[1] == "wrong result"]
    assert not wrong, wrong


def test_no_op_the_importer_maps_onto_lacks_an_export_rule(outcomes):
    """A case stops at "no export" only where onnx.checker refuses a dtype the written opset lacks
    (Celu on float16 is opset 28's), never for an op without an export rule."""
    no_export = [row for rows in outcomes.values() for row in rows if row[1] == "no export"]
    assert all("fails onnx.checker" in detail for _, _, detail in no_export), no_export


def test_checker_failure_on_export_is_a_typed_error():
    """A dtype ONNX's opset-17 op does not take (Celu on float16) was an untyped InferenceError."""
    program = to_static(paddle.nn.functional.celu, input_spec=[InputSpec([2, 3], "float16", "x")]).concrete_program()
    with pytest.raises(ConversionError, match="fails onnx.checker.*Celu"):
        program_to_onnx(program)
