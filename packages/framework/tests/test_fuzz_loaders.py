"""Every loader survives hostile files: hypothesis-drawn structure-aware mutations of an ONNX LeNet,
its exported model directory, a checkpoint, a config and an image, each loaded (and for models run)
in a worker process under a timeout. Only ``PaddlectlError`` or success may come out: any other
exception, a hang or a worker crash fails the test. The recipes that once failed are replayed.

CI runs a bounded slice; ``nox -s fuzz`` sets ``PADDLECTL_FUZZ_EXAMPLES`` (``onnx=10000,...``) and
``PADDLECTL_FUZZ_REPORT`` (a JSON file of the counts) for the full campaign.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
from collections import Counter

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import _fuzz  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

SLICE = {"onnx": 120, "exported": 120, "checkpoint": 60, "config": 60, "image": 40}
"""Cases per kind in CI: about a minute on two shared cores."""


def _examples() -> dict[str, int]:
    counts = dict(SLICE)
    for item in filter(None, os.environ.get("PADDLECTL_FUZZ_EXAMPLES", "").split(",")):
        kind, _, n = item.partition("=")
        if kind not in counts or not n.isdigit():
            raise ValueError(f"PADDLECTL_FUZZ_EXAMPLES: {item!r} is not KIND=N with KIND in {sorted(counts)}")
        counts[kind] = int(n)
    return counts


TIMEOUT = float(os.environ.get("PADDLECTL_FUZZ_TIMEOUT", "30"))
TALLY: dict[str, Counter] = {}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return _fuzz.make_seeds(str(tmp_path_factory.mktemp("seeds")))


@pytest.fixture(scope="module")
def worker(seeds):
    w = _fuzz.Worker(TIMEOUT)
    for kind in _fuzz.KINDS:
        w.warm(kind, seeds[kind])
    yield w
    w.close()
    report = os.environ.get("PADDLECTL_FUZZ_REPORT")
    if report and TALLY:
        with open(report, "w", encoding="utf-8") as f:
            json.dump({k: dict(v) for k, v in TALLY.items()}, f, indent=1)


def _failure_dir(tmp_path) -> str:
    return os.environ.get("PADDLECTL_FUZZ_FAILURES") or str(tmp_path / "failures")


@pytest.mark.parametrize("kind", _fuzz.KINDS)
def test_mutated_files_raise_only_typed_errors(kind, seeds, worker, tmp_path):
    tally = TALLY.setdefault(kind, Counter())
    failures: list[str] = []
    cases = tmp_path / "cases"
    cases.mkdir()

    campaign = bool(os.environ.get("PADDLECTL_FUZZ_EXAMPLES"))  # CI's slice is the same cases every run

    @settings(max_examples=_examples()[kind], deadline=None, database=None, phases=[Phase.generate],
              derandomize=not campaign, suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(_fuzz.STRATEGIES[kind])
    def one(recipe):
        recipe = _fuzz.as_json(recipe)
        path = _fuzz.materialize(kind, seeds[kind], recipe, str(cases / f"case{sum(tally.values())}"))
        outcome, detail = worker.run(kind, path)
        tally[outcome] += 1
        if outcome not in ("ran", "typed"):
            failures.append(_keep(kind, recipe, outcome, detail, _failure_dir(tmp_path)))

    one()
    print(f"fuzz {kind}: {sum(tally.values())} cases, " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    assert not failures, f"{len(failures)} {kind} case(s) escaped the typed errors:\n" + "\n".join(failures[:20])


def _keep(kind: str, recipe: list, outcome: str, detail: str, where: str) -> str:
    """Save a failing recipe in the corpus format (copy it under fuzz_corpus/ once fixed)."""
    os.makedirs(os.path.join(where, kind), exist_ok=True)
    name = hashlib.sha1(json.dumps(recipe).encode()).hexdigest()[:12] + ".json"
    path = os.path.join(where, kind, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"recipe": recipe, "found": f"{outcome}: {detail}"}, f, indent=1)
    return f"{outcome}: {detail}  (recipe {path}: {recipe})"


CORPUS = sorted(glob.glob(os.path.join(_fuzz.CORPUS, "*", "*.json")))


@pytest.mark.parametrize("entry", CORPUS, ids=[os.path.relpath(p, _fuzz.CORPUS) for p in CORPUS])
def test_corpus_cases_stay_typed(entry, seeds, worker, tmp_path):
    kind = os.path.basename(os.path.dirname(entry))
    with open(entry, encoding="utf-8") as f:
        case = json.load(f)
    path = _fuzz.materialize(kind, seeds[kind], case["recipe"], str(tmp_path / "case"))
    outcome, detail = worker.run(kind, path)
    assert outcome in ("ran", "typed"), f"{entry} (once: {case['found']}) now gives {outcome}: {detail}"


def test_the_worker_reports_untyped_errors_crashes_and_hangs(tmp_path):
    """The verdicts the fuzz tests rely on: each planted failure is reported as what it is, and the
    worker is restarted after a crash or a hang."""
    worker = _fuzz.Worker(timeout=3)
    try:
        verdicts = []
        for action in ("raise", "exit", "30", "0"):
            case = tmp_path / f"{len(verdicts)}.txt"
            case.write_text(action, encoding="utf-8")
            verdicts.append(worker.run("selftest", str(case)))
    finally:
        worker.close()
    assert [v[0] for v in verdicts] == ["untyped", "crash", "hang", "ran"]
    assert verdicts[0][1].startswith("KeyError at _fuzz.py:") and "exit code 3" in verdicts[1][1]
