"""Import -> export -> import of one ONNX model, checked against known outputs: what says an op
type's import and export rules agree (issue 32's "every op that imports also exports").

The first import goes through ``onnx_to_program``; the program is exported with ``program_to_onnx``
(onnx's checker runs there), and the exported file is imported again through the backend and run
on the same inputs, compared with onnx's own tolerance rule; where onnxruntime is installed it runs
the exported file too. ``import_only`` names the ops an imported program holds that have no export
rule, for the README's list. Where onnxruntime misses the case's tolerance on the export, it is
run on the original model too: missing it there as well is onnxruntime's limit (its float32 DFT),
not the export's.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ConversionError, PaddlectlError
from .backend import PaddlectlBackend, _bound_model, _inputs_behind
from .builder import DataDependentError, clean_name
from .export import _emitter, program_to_onnx
from .importer import onnx_to_program


def import_only(program) -> list[str]:
    """The ops of an imported program that have no ONNX export rule, sorted."""
    return sorted({op.name for op in program.walk() if op.name not in ("input", "param", "constant")
                   and _emitter(op.name) is None})  # fmt: skip


def _import_binding(model, feeds: dict):
    """(program, bound values): graph inputs a node needs as constants (a Reshape target...) are
    bound to their values in ``feeds``, as the backend binds them per call."""
    bound: dict = {}
    while True:
        try:
            return onnx_to_program(_bound_model(model, bound) if bound else model)[0], bound
        except DataDependentError as exc:
            new = [n for n in _inputs_behind(model, exc.name, list(feeds)) if n not in bound]
            if not new:
                raise
            bound.update({n: feeds[n] for n in new})


def round_trip(model, data: list, rtol: float = 1e-3, atol: float = 1e-7) -> tuple[str, str]:
    """(outcome, detail) of ``model`` imported, exported and imported again, run on ``data`` (a list
    of (inputs in graph order, expected outputs); inputs bound as constants take the first set's
    values): "pass", "not imported", "no export" (detail: the ops without an export rule), "typed
    error in run", "onnxruntime refused", "wrong before export" (the first import misses the expected
    outputs too) or "wrong result"."""
    from onnx.backend.test.runner import Runner

    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    try:
        program, bound = _import_binding(model, dict(zip(names, data[0][0], strict=True)))
    except PaddlectlError as exc:
        return "not imported", str(exc).splitlines()[0]
    missing = import_only(program)
    if missing:
        return "no export", ", ".join(missing)
    try:
        exported = program_to_onnx(program)
    except ConversionError as exc:
        return "no export", str(exc).splitlines()[0]
    rep = PaddlectlBackend.prepare(exported)
    session, original = _onnxruntime(exported), None
    for inputs, expected in data:
        given = dict(zip(names, inputs, strict=True))
        if any(not np.array_equal(given[n], v) for n, v in bound.items()):
            continue  # another value of an input imported as a constant: another program
        feeds = {clean_name(n): np.asarray(x) for n, x in given.items() if n not in bound}
        try:
            Runner.assert_similar_outputs(expected, [np.asarray(o) for o in rep.run(feeds)], rtol, atol)
        except PaddlectlError as exc:
            return "typed error in run", str(exc).splitlines()[0]
        except AssertionError as exc:
            first = PaddlectlBackend.prepare(model).run
            if not _agrees(first, dict(zip(names, inputs, strict=True)), expected, rtol, atol):
                return "wrong before export", str(exc).strip().splitlines()[0]
            return "wrong result", str(exc).strip().splitlines()[0]
        if session is None:
            continue
        try:
            theirs = session.run(None, feeds)
        except Exception as exc:  # noqa: BLE001 - onnxruntime's kernels cover fewer dtypes than ONNX allows
            return "onnxruntime refused", f"{type(exc).__name__}: {str(exc)[:200]}"
        try:
            Runner.assert_similar_outputs(expected, theirs, rtol, atol)
        except AssertionError as exc:
            original = original or _onnxruntime(model)
            given = dict(zip(names, inputs, strict=True))
            if original is None or _agrees(functools.partial(original.run, None), given, expected, rtol, atol):
                return "wrong result", "onnxruntime on the export: " + str(exc).strip().splitlines()[0]
            # onnxruntime misses the case's tolerance on the original model too (float32 DFTs): its own limit
    return "pass", ""


def _agrees(run, feeds: dict, expected: list, rtol: float, atol: float) -> bool:
    """Whether ``run(feeds)`` meets the expected outputs (False where it cannot run them)."""
    from onnx.backend.test.runner import Runner

    try:
        Runner.assert_similar_outputs(expected, [np.asarray(o) for o in run(feeds)], rtol, atol)
    except Exception:  # noqa: BLE001 - a mismatch or a refusal alike
        return False
    return True


def _onnxruntime(model):
    """An onnxruntime session on ``model``, None where onnxruntime is not installed or has no kernel."""
    try:
        import onnxruntime
    except ImportError:
        return None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - e.g. NOT_IMPLEMENTED for int16 Max: ours still ran the export
        return None
