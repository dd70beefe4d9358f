"""The gate on real measurements of the exported model, on this noisy shared machine.

An unchanged model must pass run after run, and the same model with 50 ms of sleep in the
task's post-processing hook (about x50 its ~1 ms request) must fail run after run, with both
statistical tests.
"""

import json

import pytest
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app

cli = CliRunner()


def _gate(exported, config_file, out, task, *extra):
    result = cli.invoke(
        app,
        ["gate", "--model", str(exported), "--task", task, "-c", str(config_file), "--out", str(out), *extra],
    )
    return result, json.loads((out / "gate.json").read_text())


@pytest.mark.parametrize(("test", "same_runs", "slow_runs"), [("mannwhitney", 3, 2), ("bootstrap", 2, 2)])
def test_unchanged_model_passes_and_slowed_model_fails_over_repeated_runs(
    test, same_runs, slow_runs, exported, config_file, tmp_path
):
    override = ["-o", f"Eval.harness.latency_gate.test={test}", "-o", "Eval.harness.batch_sizes=[1]",
                "-o", "Eval.harness.max_samples=96"]  # fmt: skip
    baseline = cli.invoke(app, ["run", "--model", str(exported), "--task", "digits_task:DigitsTask",
                                "-c", str(config_file), "--json", *override])  # fmt: skip
    assert baseline.exit_code == 0, baseline.output
    promoted = cli.invoke(app, ["promote", json.loads(baseline.stdout)["run_id"], "-c", str(config_file)])
    assert promoted.exit_code == 0, promoted.output

    for attempt in range(same_runs):
        result, verdict = _gate(exported, config_file, tmp_path / f"same{attempt}", "digits_task:DigitsTask", *override)
        assert result.exit_code == 0, result.output
        assert verdict["status"] == "pass"

    for attempt in range(slow_runs):
        result, verdict = _gate(
            exported, config_file, tmp_path / f"slow{attempt}", "digits_task:SlowDigitsTask", *override
        )
        assert result.exit_code == 1, result.output
        first = verdict["checks"][0]
        assert first["status"] == "regression" and first["name"].startswith("latency_bs1")
        assert first["candidate"] > 40  # ms: the sleep is in every request
        assert "FAIL" in verdict["summary"]
        assert "❌" in (tmp_path / f"slow{attempt}" / "gate.md").read_text()
