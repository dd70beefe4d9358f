"""A framework task on a model without its processing (jit.save, .onnx): the processing comes
from the config given with -c, and without one the command stops at once with one line saying
what is missing."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app

cli = CliRunner()
FAST = ["-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false", "-o", "Eval.harness.repeats=20",
        "-o", "Eval.harness.max_samples=64"]  # fmt: skip


def _digits_config() -> Path:
    from paddlectl.framework.vision import task as vision_task

    return Path(vision_task.__file__).parent / "configs" / "digits_lenet.yml"


def test_a_jit_saved_model_takes_its_processing_from_the_config(exported, tmp_path):
    result = cli.invoke(
        app,
        ["run", "--model", str(exported), "--task", "vision.cls", "-c", str(_digits_config()),
         "--output-dir", str(tmp_path / "eval"), "--json", *FAST],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "it is taken from the config" in result.output
    metrics = json.loads(result.stdout)["metrics"]
    assert metrics["error_rate"] == 0.0 and 0 <= metrics["acc"] <= 1


@pytest.mark.parametrize(
    ("model", "missing"),
    [
        ("lenet", "needs a dataset and the vision.cls pre/post-processing"),
        ("model.onnx", "needs a dataset and the vision.cls pre/post-processing"),
    ],
)
def test_without_a_config_the_error_says_what_is_missing(model, missing, exported, tmp_path):
    target = exported if model == "lenet" else tmp_path / model
    if model == "model.onnx":
        target.write_bytes(b"\x08\x07")
    result = cli.invoke(app, ["run", "--model", str(target), "--task", "vision.cls", "--output-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert missing in result.output and "pass -c CONFIG with an Eval dataset" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Train" not in result.output
