"""Against a real `mlflow server` on 127.0.0.1: logging, registry, and a server that goes away mid-run."""

import json

from digits_task import DigitsTask
from helpers import evaluate_and_log
from mlflow.tracking import MlflowClient
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.predictor import open_predictor
from paddlectl.eval_harness.store import LocalStore
from paddlectl.eval_harness.tracking import LOCAL_ID_TAG

cli = CliRunner()


def test_server_logging_outage_and_sync(mlflow_server, exported, config, config_file, tmp_path):
    uri = mlflow_server.wait_ready()
    healthy = cli.invoke(app, ["run", "--model", str(exported), "--task", "digits_task:DigitsTask",
                               "-c", str(config_file), "--tracking-uri", uri, "--json"])  # fmt: skip
    assert healthy.exit_code == 0, healthy.output
    first = json.loads(healthy.stdout)
    client = MlflowClient(uri)
    mlrun = client.get_run(first["run_id"])
    assert mlrun.info.status == "FINISHED"
    assert mlrun.data.metrics["accuracy"] == first["metrics"]["accuracy"]
    artifacts = {a.path for a in client.list_artifacts(first["run_id"])}
    assert {"report.json", "report.md", "latency_hist.png", "plots", "model"} <= artifacts
    assert not (tmp_path / "eval" / "mlflow.db").exists()  # nothing went to the embedded default
    promoted = cli.invoke(app, ["promote", first["run_id"], "--tracking-uri", uri, "-c", str(config_file)])
    assert promoted.exit_code == 0, promoted.output
    assert client.get_model_version_by_alias("digits-lenet", "champion").run_id == first["run_id"]

    # the server goes away while the evaluation is running (and is restarted at once, on the same
    # stores and a new address, which takes it many seconds): the result must survive
    task = DigitsTask(after_samples=(40, mlflow_server.restart))
    logged = evaluate_and_log(task, open_predictor(exported, threads=1), config, exported, tracking_uri=uri)
    assert logged.run_id is None
    assert "unreachable" in logged.warning and "paddlectl eval sync" in logged.warning
    store = LocalStore(tmp_path / "eval")
    assert [r.local_id for r in store.pending()] == [logged.run.local_id]
    kept = logged.run.report()
    assert kept.metrics["accuracy"] == first["metrics"]["accuracy"]

    gated = cli.invoke(app, ["gate", "--candidate", logged.run.local_id, "--tracking-uri", uri, "-c", str(config_file)])
    assert gated.exit_code == 3, gated.output  # no baseline reachable: inconclusive, never a silent pass

    uri = mlflow_server.wait_ready()  # back: same backend store and artifacts, new port
    synced = cli.invoke(app, ["sync", "--tracking-uri", uri, "-c", str(config_file)])
    assert synced.exit_code == 0, synced.output
    assert store.pending() == []
    client = MlflowClient(uri)
    run_id = logged.run.state()["run_id"]
    restored = client.get_run(run_id)
    assert restored.info.status == "FINISHED"
    assert restored.data.tags[LOCAL_ID_TAG] == kept.local_id
    assert restored.data.metrics["latency_p50_ms_bs1"] == kept.metrics["latency_p50_ms_bs1"]
    assert {v.run_id for v in client.search_model_versions("name = 'digits-lenet'")} == {first["run_id"], run_id}
