"""ONNX's node conformance cases (``onnx.backend.test``) through paddlectl, counted by outcome.

The cases are built in memory by the ``onnx`` package (the pip wheel leaves out the node data files,
``load_model_tests(kind="node")`` generates them), so nothing is downloaded. A case counts when
every tensor it feeds, returns or declares is a plain tensor type (float16/bfloat16/float32/float64,
int8-64, uint8-64, bool) and it uses only the default domain: sequences, optionals, strings,
float8/4-bit types, ``ai.onnx.ml`` and training ops are out of scope and listed as skipped. Each
case is prepared and run with ``backend.PaddlectlBackend`` and compared with onnx's own
``Runner.assert_similar_outputs`` (shape, dtype, values within the case's rtol/atol); with
``--ort`` onnxruntime runs the same cases, for the README's side-by-side figure.

``python -m paddlectl.framework.onnx.conformance [--ort] [--zoo] [--json PATH] [-k SUBSTRING]``
prints the counts per outcome (``--zoo``: the model-zoo classics, ``--pytorch``: the PyTorch-exported
cases too); the ``onnx_conformance`` nox session runs it.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable

import numpy as np

from ..errors import OnnxImportError, PaddlectlError
from .dependency import onnx

PLAIN_TYPES = frozenset(
    getattr(onnx.TensorProto, t)
    for t in ("FLOAT16", "BFLOAT16", "FLOAT", "DOUBLE", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16",
              "UINT32", "UINT64", "BOOL")
)  # fmt: skip
CASE_SECONDS = 30
"""A case still running after this long counts as ``timeout`` (the suite must finish in bounded time)."""
_UNSUPPORTED_OP = re.compile(r"op type (\w+) is not supported")


def _value_types(graph) -> Iterable:
    """The type of every value a graph (and its subgraphs) declares."""
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        yield v.type
    for node in graph.node:
        for a in node.attribute:
            for g in [a.g] * a.HasField("g") + list(a.graphs):
                yield from _value_types(g)


def _tensor_types(graph) -> Iterable[int]:
    """Element types of initializers and tensor attributes (a Constant's value, a Cast's target)."""
    for t in graph.initializer:
        yield t.data_type
    for node in graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                yield a.t.data_type
            if node.op_type in ("Cast", "CastLike", "EyeLike", "RandomNormal", "RandomUniform") and a.name in (
                "to",
                "dtype",
            ):
                yield a.i
            for g in [a.g] * a.HasField("g") + list(a.graphs):
                yield from _tensor_types(g)


def out_of_scope(model) -> str | None:
    """Why a case is outside the plain-tensor default-domain set, or None when it is in it."""
    for imp in model.opset_import:
        if imp.domain not in ("", "ai.onnx"):
            return f"domain {imp.domain}"
    for t in _value_types(model.graph):
        if t.WhichOneof("value") is None:  # an untyped intermediate of an expanded function body
            continue
        if not t.HasField("tensor_type"):
            return f"{t.WhichOneof('value')} value"
        if t.tensor_type.elem_type not in PLAIN_TYPES:
            return f"{onnx.TensorProto.DataType.Name(t.tensor_type.elem_type)} tensor"
    for elem in _tensor_types(model.graph):
        if elem not in PLAIN_TYPES:
            return f"{onnx.TensorProto.DataType.Name(elem)} tensor"
    return None


def node_cases(pattern: str = "", modules: tuple = ()) -> list:
    """The in-scope node cases whose name contains ``pattern``, sorted by name; with ``modules``
    (names under ``onnx.backend.test.case.node``, e.g. ``"cumsum"``) only the cases those modules
    generate (and any generated earlier in this process), much faster than generating all of them."""
    if modules:
        import importlib

        from onnx.backend.test.case.node import _NodeTestCases

        for module in modules:
            importlib.import_module(f"onnx.backend.test.case.node.{module}")
        cases = list(_NodeTestCases)
    else:
        from onnx.backend.test.loader import load_model_tests

        cases = load_model_tests(kind="node")
    chosen = {c.name: c for c in cases if pattern in c.name and out_of_scope(c.model) is None}
    return [chosen[name] for name in sorted(chosen)]


def _data(case) -> list[tuple[list, list]]:
    from onnx.backend.test.runner import _normalize_tensor

    return [([_normalize_tensor(i) for i in ins], [_normalize_tensor(o) for o in outs]) for ins, outs in case.data_sets]


def _classify_refusal(exc: PaddlectlError) -> str:
    text = str(exc)
    if _UNSUPPORTED_OP.search(text):
        return "refused: unsupported op"
    if "element type" in text:
        return "refused: dtype"
    if "must be a constant or computed from shapes only" in text:
        return "refused: data-dependent shape"
    if isinstance(exc, OnnxImportError) and "unsupported node" in text:
        return "refused: attribute/opset"
    return "refused: other"


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def run_case(case, prepare: Callable, typed_errors: bool = True) -> tuple[str, str]:
    """(outcome, detail) of one case under ``prepare(model) -> rep`` (rep.run(list) -> outputs);
    ``typed_errors``: an exception other than a PaddlectlError is counted as "untyped" (a defect in
    paddlectl; another runtime's exceptions are just errors)."""
    from onnx.backend.test.runner import Runner

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    stage = "prepare"
    try:
        rep = prepare(case.model)
        for inputs, expected in _data(case):
            stage = "run"
            outputs = rep.run(inputs)
            stage = "compare"
            Runner.assert_similar_outputs(expected, [np.asarray(o) for o in outputs], case.rtol, case.atol)
        return "pass", ""
    except _Timeout:
        return "timeout", f"over {CASE_SECONDS} s in {stage}"
    except AssertionError as exc:
        first = str(exc).strip().splitlines()
        return "wrong result", (first[1] if len(first) > 1 else first[0]) if first else ""
    except PaddlectlError as exc:
        detail = str(exc).strip().splitlines()
        if stage == "prepare":
            return _classify_refusal(exc), " | ".join(detail[:2])
        return f"typed error in {stage}", detail[0] if detail else type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - the suite counts every failure; an untyped one is a bug
        return (
            f"{'untyped ' if typed_errors else ''}error in {stage}",
            f"{type(exc).__name__}: {str(exc).strip()[:200]}",
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def paddlectl_prepare(model):
    from .backend import PaddlectlBackend

    return PaddlectlBackend.prepare(model)


def onnxruntime_prepare(model):
    """onnxruntime's CPU session behind the same ``run(list)`` interface."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: its warnings about unused initializers are noise here
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]

    class Rep:
        def run(self, inputs):
            return session.run(None, dict(zip(names, inputs, strict=True)))

    return Rep()


def run_suite(cases: list, prepare: Callable, typed_errors: bool = True) -> dict[str, tuple[str, str]]:
    """Case name -> (outcome, detail)."""
    return {case.name: run_case(case, prepare, typed_errors) for case in cases}


def summary(results: dict[str, tuple[str, str]]) -> collections.Counter:
    return collections.Counter(outcome for outcome, _ in results.values())


def unsupported_ops(results: dict[str, tuple[str, str]]) -> collections.Counter:
    """How many cases each unsupported op type blocks."""
    counts: collections.Counter = collections.Counter()
    for outcome, detail in results.values():
        if outcome == "refused: unsupported op":
            counts.update(set(_UNSUPPORTED_OP.findall(detail)))
    return counts


def _table(columns: dict[str, collections.Counter], total: int) -> str:
    outcomes = sorted({o for c in columns.values() for o in c}, key=lambda o: (o != "pass", o))
    width = max(len(o) for o in outcomes)
    lines = [f"{'outcome':<{width}}  " + "  ".join(f"{n:>11}" for n in columns)]
    for o in outcomes:
        lines.append(f"{o:<{width}}  " + "  ".join(f"{c.get(o, 0):>11}" for c in columns.values()))
    lines.append(f"{'cases':<{width}}  " + "  ".join(f"{total:>11}" for _ in columns))
    return "\n".join(lines)


ZOO_DIR = "backend/test/data/light"
"""The model-zoo classics shipped inside the onnx wheel (AlexNet ... ZFNet-512, opset 9) with
constant-filled weights ("light"): every op and shape of the real models, a few MB each."""


def zoo_models() -> list[str]:
    return sorted(glob.glob(os.path.join(os.path.dirname(onnx.__file__), ZOO_DIR, "*.onnx")))


def logits_model(model):
    """``model`` with its final Softmax dropped: the light models' logits are ~1e9 and equal
    across classes, so their softmax amplifies float32 rounding (1e-7 relative) into different
    probabilities in any two runtimes; the logits compare meaningfully."""
    last = model.graph.node[-1]
    if last.op_type != "Softmax":
        return model
    inferred = onnx.shape_inference.infer_shapes(model)
    value = next(v for v in inferred.graph.value_info if v.name == last.input[0])
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[-1]
    del out.graph.output[:]
    out.graph.output.append(value)
    return out


def run_zoo_model(path: str, rtol: float = 1e-5) -> tuple[str, str]:
    """(outcome, detail): the logits of ``path`` on a seeded random input, ours vs onnxruntime,
    within ``rtol`` of the largest magnitude."""
    import onnxruntime

    from .backend import PaddlectlBackend

    model = logits_model(onnx.load(path))
    initializers = {t.name for t in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in initializers]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    try:
        ours = PaddlectlBackend.prepare(model).run([x])[0]
    except PaddlectlError as exc:
        return "refused", str(exc).splitlines()[0]
    ref = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {inp.name: x}
    )[0]
    err = float(np.abs(ours - ref).max() / max(float(np.abs(ref).max()), 1e-30))
    return ("pass" if ours.shape == ref.shape and err <= rtol else "wrong result"), f"max relative error {err:.1e}"


PYTORCH_KINDS = ("pytorch-converted", "pytorch-operator")
"""Models PyTorch's exporter wrote (opsets 6..12), shipped in the onnx wheel with their data sets."""


def run_pytorch_case(case_dir: str) -> tuple[str, str]:
    """(outcome, detail) of one PyTorch-exported case: every stored data set, compared as onnx's runner does."""
    from onnx.backend.test.runner import Runner

    from .backend import PaddlectlBackend

    def tensors(folder: str, kind: str) -> list:
        paths = sorted(glob.glob(os.path.join(folder, f"{kind}_*.pb")))
        return [onnx.numpy_helper.to_array(onnx.load_tensor(p)) for p in paths]

    try:
        rep = PaddlectlBackend.prepare(onnx.load(os.path.join(case_dir, "model.onnx")))
        for folder in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*"))):
            got = rep.run(tensors(folder, "input"))
            Runner.assert_similar_outputs(tensors(folder, "output"), [np.asarray(g) for g in got], 1e-3, 1e-7)
    except AssertionError as exc:
        return "wrong result", str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except PaddlectlError as exc:
        return _classify_refusal(exc), " | ".join(str(exc).strip().splitlines()[:2])
    return "pass", ""


def pytorch_cases() -> list[str]:
    base = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    return sorted(glob.glob(os.path.join(base, "pytorch-*", "test_*")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paddlectl.framework.onnx.conformance", description=__doc__)
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="only the cases of this onnx.backend.test.case.node module (repeatable; faster)",
    )
    parser.add_argument("--ort", action="store_true", help="also run onnxruntime on the same cases")
    parser.add_argument("--json", help="write every case's outcome here")
    parser.add_argument("--pytorch", action="store_true", help="also the PyTorch-exported cases the onnx wheel ships")
    parser.add_argument("--zoo", action="store_true", help="also the nine model-zoo classics, against onnxruntime")
    parser.add_argument(
        "--min-pass",
        type=float,
        default=0.0,
        help="exit 1 when fewer node cases than this fraction pass, or (with --zoo) a zoo model fails: CI's floor",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cases = node_cases(args.k, tuple(args.module))
    if not cases:
        parser.error(f"no in-scope node case matches {args.k!r}")
    results = {"paddlectl": run_suite(cases, paddlectl_prepare)}
    if args.ort:
        results["onnxruntime"] = run_suite(cases, onnxruntime_prepare, typed_errors=False)
    print(_table({name: summary(r) for name, r in results.items()}, len(cases)))
    ours = summary(results["paddlectl"])
    print(f"paddlectl passes {ours['pass']} of {len(cases)} node cases ({100 * ours['pass'] / len(cases):.1f}%)")
    blocked = unsupported_ops(results["paddlectl"]).most_common(30)
    if blocked:
        print("most common unsupported ops (cases): " + ", ".join(f"{op} ({n})" for op, n in blocked))
    if args.pytorch:
        torch = {os.path.basename(p): run_pytorch_case(p) for p in pytorch_cases()}
        print(f"PyTorch-exported cases: {sum(o == 'pass' for o, _ in torch.values())} of {len(torch)} pass")
        results["pytorch"] = torch
    if args.zoo:
        zoo = {os.path.basename(p): run_zoo_model(p) for p in zoo_models()}
        for name, (outcome, detail) in zoo.items():
            print(f"model zoo {name}: {outcome} ({detail})")
        print(f"model zoo: {sum(o == 'pass' for o, _ in zoo.values())} of {len(zoo)} pass")
        results["zoo"] = zoo
    print(f"{time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: {c: list(v) for c, v in r.items()} for k, r in results.items()}, f, indent=1, sort_keys=True)
    failed_zoo = [name for name, (outcome, _) in results.get("zoo", {}).items() if outcome != "pass"]
    if ours["pass"] < args.min_pass * len(cases) or failed_zoo:
        print(f"below the floor: node cases under {args.min_pass:.1%} or zoo models failing {failed_zoo}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
