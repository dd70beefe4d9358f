"""Integration with a real MLflow store: the embedded SQLite default under the output directory."""

import json

import pytest
from helpers import evaluate_and_log, evaluate_and_record
from mlflow.tracking import MlflowClient
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.store import LocalStore
from paddlectl.eval_harness.tracking import LOCAL_ID_TAG, Tracker, default_uri

cli = CliRunner()


def test_run_is_logged_with_params_metrics_artifacts_and_registered(task, runner, config, weights, tmp_path):
    logged = evaluate_and_log(task, runner, config, weights)
    out = tmp_path / "eval"
    assert logged.warning is None and logged.run_id
    assert (out / "mlflow.db").is_file()
    client = MlflowClient(default_uri(out))
    mlrun = client.get_run(logged.run_id)
    report = logged.run.report()
    assert mlrun.info.status == "FINISHED"
    assert mlrun.data.metrics["accuracy"] == pytest.approx(report.metrics["accuracy"])
    assert mlrun.data.metrics["latency_p95_ms_bs4"] == pytest.approx(report.metrics["latency_p95_ms_bs4"])
    params = mlrun.data.params
    assert params["config.Eval.harness.repeats"] == "30"
    assert params["version.paddlectl-framework"] == report.versions["paddlectl-framework"]
    assert params["version.numba"] and params["version.numpy"]
    assert params["machine.fingerprint"] == report.fingerprint
    assert params["cost.machine_price_per_hour"] == "3.6"
    assert params["git_sha"] == (report.git_sha or "n/a")
    assert mlrun.data.tags[LOCAL_ID_TAG] == report.local_id
    assert client.get_experiment(mlrun.info.experiment_id).name == "vision.digits/digits-lenet"
    artifacts = {a.path for a in client.list_artifacts(logged.run_id)}
    assert {"report.json", "report.md", "latency_hist.png", "plots", "model"} <= artifacts
    assert [a.path for a in client.list_artifacts(logged.run_id, "plots")] == ["plots/confusion.png"]
    assert str(out.resolve()) in mlrun.info.artifact_uri
    (version,) = client.search_model_versions(f"run_id = '{logged.run_id}'")
    assert version.name == "digits-lenet"
    assert logged.run.state() == {**logged.run.state(), "status": "logged", "run_id": logged.run_id}


def test_logging_is_idempotent_and_replaces_a_half_written_run(task, runner, config, weights, tmp_path):
    out = tmp_path / "eval"
    run = evaluate_and_record(task, runner, config, weights)
    tracker = Tracker(default_uri(out), out)
    report = run.report()
    experiment_id = tracker.client.create_experiment(report.experiment, artifact_location=(out / "a").as_uri())
    half = tracker.client.create_run(experiment_id, tags={LOCAL_ID_TAG: report.local_id})
    run_id = tracker.log(run)
    assert run_id != half.info.run_id
    assert tracker.log(run) == run_id
    live = tracker.client.search_runs([experiment_id], filter_string=f"tags.`{LOCAL_ID_TAG}` = '{report.local_id}'")
    assert [r.info.run_id for r in live] == [run_id]
    assert tracker.client.get_run(half.info.run_id).info.lifecycle_stage == "deleted"


def test_promote_gate_compare_and_history_through_the_cli(task, runner, config, config_file, weights, tmp_path):
    out = tmp_path / "eval"
    first = evaluate_and_log(task, runner, config, weights)
    second = evaluate_and_log(task, runner, config, weights)

    no_champion = cli.invoke(app, ["gate", "-c", str(config_file), "--candidate", second.run_id])
    assert no_champion.exit_code == 3, no_champion.output
    assert "no champion" in no_champion.output

    promoted = cli.invoke(app, ["promote", first.run_id, "-c", str(config_file)])
    assert promoted.exit_code == 0, promoted.output
    client = MlflowClient(default_uri(out))
    assert client.get_model_version_by_alias("digits-lenet", "champion").run_id == first.run_id

    gated = cli.invoke(
        app, ["gate", "-c", str(config_file), "--candidate", second.run_id, "--out", str(tmp_path / "g")]
    )
    assert gated.exit_code == 0, gated.output
    verdict = json.loads((tmp_path / "g" / "gate.json").read_text())
    assert verdict["status"] == "pass" and verdict["baseline"] == first.run_id
    assert {c["name"] for c in verdict["checks"]} == {
        "accuracy",
        "error_rate",
        "latency_bs1 (mannwhitney)",
        "latency_bs4 (mannwhitney)",
    }
    assert "✅ PASS" in (tmp_path / "g" / "gate.md").read_text()

    compared = cli.invoke(app, ["compare", first.run_id, second.run_id, "-c", str(config_file), "--json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["delta"]["accuracy"] == 0.0

    hist = cli.invoke(app, ["history", "--metric", "accuracy", "-c", str(config_file), "--json"])
    assert hist.exit_code == 0, hist.output
    rows = json.loads(hist.stdout)["rows"]
    assert [r["run_id"] for r in rows] == [first.run_id, second.run_id]
    assert (out / "history-accuracy.png").stat().st_size > 0


def test_gate_fails_a_real_accuracy_drop_and_is_inconclusive_across_machines(
    task, runner, config, config_file, weights
):
    baseline = evaluate_and_log(task, runner, config, weights)
    candidate = evaluate_and_record(task, runner, config, weights)
    data = json.loads(candidate.report_path.read_text())
    data["fingerprint"] = "another-machine"
    candidate.report_path.write_text(json.dumps(data))
    other = cli.invoke(
        app, ["gate", "-c", str(config_file), "--candidate", candidate.local_id, "--baseline", baseline.run_id]
    )
    assert other.exit_code == 3, other.output
    assert "fingerprints differ" in other.output

    data["metrics"]["accuracy"] -= 0.1
    candidate.report_path.write_text(json.dumps(data))
    worse = cli.invoke(
        app, ["gate", "-c", str(config_file), "--candidate", candidate.local_id, "--baseline", baseline.run_id]
    )
    assert worse.exit_code == 1, worse.output
    assert worse.output.index("REGRESSION") < worse.output.index("accuracy")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gate"], "exactly one of --candidate"),
        (["gate", "--candidate", "nope"], "not in the tracking store"),
        (["gate", "--candidate", "x", "-o", "Eval.harness.repats=3"], "did you mean 'repeats'"),
        (["promote", "nope"], "nope"),
        (["run", "--model", "missing-dir", "--task", "digits_task:DigitsTask"], "missing-dir"),
    ],
)
def test_usage_errors_exit_2_with_the_fix(args, message, tmp_path):
    result = cli.invoke(app, [*args, "--output-dir", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_pending_runs_are_listed_and_sync_uploads_them(task, runner, config, config_file, weights, tmp_path):
    run = evaluate_and_record(task, runner, config, weights)
    store = LocalStore(tmp_path / "eval")
    assert [r.local_id for r in store.pending()] == [run.local_id]
    synced = cli.invoke(app, ["sync", "-c", str(config_file)])
    assert synced.exit_code == 0, synced.output
    assert store.pending() == []
    assert MlflowClient(default_uri(tmp_path / "eval")).get_run(run.state()["run_id"]).info.status == "FINISHED"
