"""`paddlectl eval run` on a LeNet exported with paddle.jit.save, opened by the framework's Predictor."""

import json
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app
from paddlectl.eval_harness.predictor import open_predictor
from paddlectl.eval_harness.store import LocalStore
from paddlectl.eval_harness.tracking import default_uri

cli = CliRunner()


def test_run_evaluates_the_exported_model_with_cold_start_and_logs_it(exported, config_file, tmp_path):
    result = cli.invoke(
        app,
        ["run", "--model", str(exported), "--task", "digits_task:DigitsTask", "-c", str(config_file),
         "-o", "Eval.harness.cold_start=true", "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    m = out["metrics"]
    assert out["logged"] is True
    assert m["accuracy"] > 0.7 and m["error_rate"] == 0.0
    assert m["planned_memory_mb"] > 0  # the predictor's own buffer plan, known before it ran
    # a fresh process pays imports and compilation before its first prediction
    assert m["cold_start_total_s"] > m["cold_start_first_run_s"] > 0
    assert m["cold_start_total_s"] > m["cold_start_import_s"] > 0
    assert m["cold_start_total_s"] > 10 * m["latency_p50_ms_bs1"] / 1e3
    run = LocalStore(tmp_path / "eval").get(out["local_id"])
    assert run.report().config["Eval"]["harness"]["cold_start"] is True
    client = MlflowClient(default_uri(tmp_path / "eval"))
    models = {a.path for a in client.list_artifacts(out["run_id"], "model")}
    assert models == {"model/model.json", "model/model.safetensors"}


def test_predictor_and_eager_model_agree_on_accuracy(exported, lenet, task, settings, config):
    from digits_task import EagerRunner

    from paddlectl.eval_harness.evaluate import accuracy_pass

    served = accuracy_pass(task, open_predictor(exported, threads=1), settings)
    eager = accuracy_pass(task, EagerRunner(lenet), settings)
    assert [p[0] for p in served.predictions] == [p[0] for p in eager.predictions]


@pytest.mark.parametrize(
    ("model", "message"),
    [("missing", "not found"), ("model.onnx", "model.onnx"), ("not_a_model", "not a saved model directory")],
)
def test_unusable_models_are_usage_errors(model, message, tmp_path, config_file):
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07")
    (tmp_path / "not_a_model").mkdir()
    target = tmp_path / model
    result = cli.invoke(
        app, ["run", "--model", str(target), "--task", "digits_task:DigitsTask", "-c", str(config_file)]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_suite_task_trained_and_exported_by_paddlectl_is_evaluated_from_the_model_alone(tmp_path):
    """vision.cls (the framework's Task protocol): train one epoch, `export`, then `eval run --model`
    with no config and no task: both come from the exported model."""
    from paddlectl.framework.config import load_config
    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.hapi.trainer import train
    from paddlectl.framework.vision import task as vision_task

    digits = Path(vision_task.__file__).parent / "configs" / "digits_lenet.yml"
    config = load_config(digits, [f"Global.output_dir={tmp_path / 'train'}", "Global.epochs=1"])
    trained = vision_task.ClsTask()
    train(trained, config, progress=False)
    export(trained, config, tmp_path / "train" / "best", tmp_path / "model")

    result = cli.invoke(
        app,
        ["run", "--model", str(tmp_path / "model"), "--output-dir", str(tmp_path / "eval"), "--json",
         "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false", "-o", "Eval.harness.repeats=20"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["logged"] is True
    assert out["metrics"]["acc"] > 0.5  # the task's own Accuracy metric, named as the trainer names it
    assert out["metrics"]["error_rate"] == 0.0
    report = LocalStore(tmp_path / "eval").get(out["local_id"]).report()
    assert report.task == "vision.cls"
    assert report.config["Architecture"]["name"] == "LeNet"
    assert report.main_metric == "acc"  # the trainer's main indicator

    # as the demo does: promote, then gate; accuracy and the error rate are gated with no threshold set
    store = ["--output-dir", str(tmp_path / "eval")]
    assert cli.invoke(app, ["promote", out["run_id"], *store]).exit_code == 0
    gated = cli.invoke(app, ["gate", "--candidate", out["run_id"], *store, "--json"])
    assert gated.exit_code == 0, gated.output
    checks = {c["name"]: c["status"] for c in json.loads(gated.stdout)["checks"]}
    assert checks["acc"] == checks["error_rate"] == "pass"


def test_an_onnx_model_is_evaluated_through_the_predictor(tmp_path, config_file):
    """A linear classifier written with onnx.helper: the harness's accuracy equals NumPy's."""
    from digits_task import DigitsTask, to_model_input
    from helpers import linear_onnx

    path = tmp_path / "linear.onnx"
    w, b = linear_onnx(path)

    result = cli.invoke(
        app, ["run", "--model", str(path), "--task", "digits_task:DigitsTask", "-c", str(config_file), "--json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    task = DigitsTask()
    x = to_model_input(list(task.images[1500:])).reshape(-1, 784)
    expected = float(((x @ w + b).argmax(axis=1) == task.labels[1500:]).mean())
    assert metrics["accuracy"] == pytest.approx(expected)
    assert metrics["error_rate"] == 0.0


def test_eval_without_subcommand_evaluates_the_model(exported, config_file):
    result = cli.invoke(app, ["--model", str(exported), "--task", "digits_task:DigitsTask", "-c", str(config_file)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "latency_p50_ms_bs1" in result.output


@pytest.mark.parametrize(
    "args, message",
    [(["--gate"], "pass --model DIR"), (["--model", "x", "run", "--model", "y"], "before a sub-command")],
)
def test_eval_without_subcommand_usage_errors(args, message):
    result = cli.invoke(app, args)
    assert result.exit_code == 2 and message in result.output
