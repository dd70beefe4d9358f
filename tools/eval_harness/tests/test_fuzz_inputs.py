"""Hostile harness inputs: the ``Eval.harness`` settings, a machine prices file and the run reports the
gate, promote and compare read back are each refused with a typed error (``EvalHarnessError`` or the
framework's ``PaddlectlError``) or used; nothing else may escape (issue 29).

Hypothesis draws each input from its shape: every settings key (and the cost and latency-gate
sections) plausible or of another type; a prices file whose entries lose or change their fields; a
report.json whose fields are swapped for other types, whose samples hold NaN, infinities or
nothing, whose JSON is cut or nested deeply. Reports go through the gate and the Markdown renderer.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.errors import EvalHarnessError
from paddlectl.eval_harness.gate import run_gate
from paddlectl.eval_harness.gate import to_markdown as gate_markdown
from paddlectl.eval_harness.report import Report, to_markdown
from paddlectl.eval_harness.settings import HarnessSettings, load_settings
from paddlectl.framework.errors import PaddlectlError

TYPED = (EvalHarnessError, PaddlectlError)
FUZZ = settings(
    max_examples=int(os.environ.get("PADDLECTL_FUZZ_EXAMPLES", "100")),
    deadline=30000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6),
    st.lists(st.floats(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip


def sometimes_odd(value: st.SearchStrategy) -> st.SearchStrategy:
    """The plausible value nine times in ten."""
    return st.integers(0, 9).flatmap(lambda i: ODD if i == 9 else value)


def section(keys: dict) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={k: sometimes_odd(v) for k, v in keys.items()})


POSITIVE = st.integers(-2, 64)
FRACTION = st.floats(-0.5, 1.5)
COST = section({"machine": st.sampled_from(["aws-c7i.xlarge", "nope", ""]), "machine_price_per_hour": st.floats(-1, 10),
                "price_per_1k_tokens": st.floats(-1, 1), "tokens_per_prediction": st.floats(-1, 100),
                "prices_file": st.sampled_from(["/nonexistent.yml", "/dev/null", "."])})  # fmt: skip
GATE = section({"test": st.sampled_from(["mannwhitney", "bootstrap", "t"]), "alpha": FRACTION, "quantile": FRACTION,
                "max_slowdown": st.floats(-1, 3), "min_samples": POSITIVE, "resamples": st.integers(-1, 200),
                "batch_size": POSITIVE, "stray": st.integers()})  # fmt: skip
THRESHOLD = section({"direction": st.sampled_from(["higher", "lower", "up"]), "absolute": st.floats(-1, 1),
                     "relative": st.floats(-1, 1), "stray": st.integers()})  # fmt: skip
HARNESS = section({
    "batch_sizes": st.lists(POSITIVE, max_size=3), "warmup": POSITIVE, "repeats": POSITIVE, "rounds": POSITIVE,
    "round_pause_ms": st.floats(-10, 100), "max_samples": POSITIVE, "accuracy_batch_size": POSITIVE,
    "cold_start": st.booleans(), "threads": POSITIVE, "model_name": st.text(max_size=5), "max_error_rate": FRACTION,
    "cost": COST, "latency_gate": GATE, "thresholds": st.dictionaries(st.sampled_from(["acc", "latency_bs1_p50_ms"]), THRESHOLD),
    "output_dir": st.just("/tmp/x"), "bogus_key": st.integers(),
})  # fmt: skip


@FUZZ
@given(harness=sometimes_odd(HARNESS))
def test_hostile_settings(harness):
    try:
        load_settings({"Eval": {"harness": harness}})
    except TYPED:
        pass


ENTRY = section({"price_per_hour": st.floats(-1, 10), "currency": st.text(max_size=3), "source": st.text(max_size=5),
                 "date": st.dates()})  # fmt: skip


@FUZZ
@given(
    table=sometimes_odd(st.dictionaries(st.text(max_size=6), sometimes_odd(ENTRY), max_size=3)),
    machine=st.text(max_size=6),
    raw=st.sampled_from(["", "a: [", "\t- x", "!!python/name:os.system ''", "a: " + "[" * 1200]),
)
def test_hostile_prices_files(tmp_path_factory, table, machine, raw):
    path = tmp_path_factory.mktemp("prices") / "prices.yml"
    text = json.dumps(table, default=str) if raw == "" else raw
    path.write_text(text, encoding="utf-8")
    names = list(table) if isinstance(table, dict) and table else [machine]
    try:
        load_settings({"Eval": {"harness": {"cost": {"machine": names[0], "prices_file": str(path)}}}})
    except TYPED:
        pass


SEED = Report(
    local_id="20260101-000000-abc", created_at="2026-01-01T00:00:00+00:00", task="classification",
    model_path="/m", model_name="lenet", experiment="digits", metrics={"acc": 0.9, "latency_bs1_p50_ms": 1.5},
    latency_samples_ms={"1": [1.0, 1.2, 1.1, 1.3, 0.9, 1.0, 1.4, 1.1]}, errors={"failed": 0, "total": 10},
    config={}, versions={"paddlectl": "0.1.0"}, git_sha=None, machine={"cpu": "x"}, fingerprint="f",
    main_metric="acc", cost={"machine": "m", "machine_price_per_hour": 1.0, "source": "s", "date": "2026-01-01"},
)  # fmt: skip
SAMPLES = st.lists(st.one_of(st.floats(0, 100), st.just(float("nan")), st.just(float("inf")), st.just(-1.0)), max_size=10)  # fmt: skip
FIELD_VALUES = {
    "metrics": st.dictionaries(st.sampled_from(["acc", "latency_bs1_p50_ms", "cost_per_1k"]), st.one_of(st.none(), st.floats())),
    "latency_samples_ms": st.dictionaries(st.sampled_from(["1", "2", "x", "-1"]), SAMPLES),
    "errors": st.dictionaries(st.sampled_from(["failed", "total", "kinds"]), st.integers(-1, 20)),
    "main_metric": st.sampled_from(["acc", "missing", "latency_bs1_p50_ms"]),
    "format_version": st.sampled_from([1, 1, 2, "1"]),
}  # fmt: skip


@st.composite
def reports(draw):
    """The seed report's JSON with some fields replaced (by the same shape, or by anything) or dropped, and
    now and then its text cut or nested past what the JSON reader follows."""
    doc = asdict(SEED)
    for key in draw(st.lists(st.sampled_from(sorted(doc)), max_size=3, unique=True)):
        how = draw(st.sampled_from(["shape", "shape", "shape", "odd", "drop"]))
        if how == "drop":
            del doc[key]
        else:
            doc[key] = draw(FIELD_VALUES.get(key, ODD) if how == "shape" else ODD)
    if draw(st.integers(0, 7)) == 7:
        doc["stray"] = 1
    text = json.dumps(doc)
    tail = draw(st.sampled_from(["", "", "", "", "", "cut", "deep", "list"]))
    if tail == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    elif tail == "deep":
        text = '{"metrics": ' + "[" * 5000 + "]" * 5000 + "}"
    elif tail == "list":
        text = "[" + text + "]"
    return text


@FUZZ
@given(candidate=reports(), baseline=st.one_of(st.just(json.dumps(asdict(SEED))), reports()))
def test_hostile_reports(tmp_path_factory, candidate, baseline):
    folder = tmp_path_factory.mktemp("reports")
    (folder / "a.json").write_text(candidate, encoding="utf-8")
    (folder / "b.json").write_text(baseline, encoding="utf-8")
    try:
        a, b = Report.read(folder / "a.json"), Report.read(folder / "b.json")
    except TYPED:
        return
    to_markdown(a)
    gate_markdown(run_gate(a, b, HarnessSettings()))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("report.json", "[1, 2]"),
        ("report.json", '{"format_version": 1, "metrics": 3}'),
        ("report.json", '{"format_version": 1, "metrics": ' + "[" * 5000),
        ("report.json", json.dumps({**asdict(SEED), "stray": 1})),
        ("report.json", json.dumps({**asdict(SEED), "latency_samples_ms": {"1": "fast"}})),
        ("config.yml", "Eval:\n  harness:\n    cost: {machine: m, prices_file: PRICES}\n"),
    ],
)
def test_the_cli_names_a_hostile_file_in_one_line(tmp_path, name, text):
    prices = tmp_path / "prices.yml"
    prices.write_text("m: {price_per_hour: [1], source: s, date: d}\n")
    run = tmp_path / "eval" / "runs" / "20260101-000000-abc"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps(asdict(SEED)))
    config = tmp_path / "config.yml"
    config.write_text(f"Global:\n  output_dir: {tmp_path}\n")
    (run / name if name == "report.json" else config).write_text(text.replace("PRICES", str(prices)))
    args = [
        "compare",
        "20260101-000000-abc",
        "20260101-000000-abc",
        "-c",
        str(config),
        "--output-dir",
        str(tmp_path / "eval"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output


@pytest.mark.parametrize("key", ["warmup", "repeats", "rounds", "round_pause_ms", "max_error_rate", "threads"])
def test_a_settings_key_left_empty_means_its_default(key):
    """``repeats:`` with nothing after it is YAML null; it raised TypeError comparing None with 1."""
    assert load_settings({"Eval": {"harness": {key: None}}}) == load_settings({"Eval": {"harness": {}}})


def test_a_prices_file_nested_too_deeply_is_a_config_error(tmp_path):
    path = tmp_path / "prices.yml"
    path.write_text("m: " + "[" * 1200)
    with pytest.raises(PaddlectlError, match="nests too deeply"):
        load_settings({"Eval": {"harness": {"cost": {"machine": "m", "prices_file": str(path)}}}})
