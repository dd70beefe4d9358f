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


PRE = {"task": "vision.cls", "image_mode": "L", "transforms": [{"ToTensor": {}}], "input_shape": [1, 28, 28]}
POST = {"task": "vision.cls", "topk": 1, "label_list": None}


def test_an_onnx_file_written_by_export_carries_its_processing(tmp_path):
    from helpers import linear_onnx

    from paddlectl.eval_harness.served import stored_processing
    from paddlectl.framework.vision.task import ClsTask

    linear_onnx(tmp_path / "exported.onnx", {"preprocess": PRE, "postprocess": POST})
    linear_onnx(tmp_path / "foreign.onnx")
    assert stored_processing(ClsTask(), tmp_path / "exported.onnx") == (PRE, POST)
    assert stored_processing(ClsTask(), tmp_path / "foreign.onnx") is None


@pytest.mark.parametrize(
    ("model", "missing"),
    [
        ("lenet", "needs a dataset and the vision.cls pre/post-processing"),
        ("foreign.onnx", "needs a dataset and the vision.cls pre/post-processing"),
        ("exported.onnx", "needs a dataset, which only a config gives"),
    ],
)
def test_without_a_config_the_error_says_what_is_missing(model, missing, exported, tmp_path):
    from helpers import linear_onnx

    target = exported if model == "lenet" else tmp_path / model
    if model.endswith(".onnx"):
        linear_onnx(target, {"preprocess": PRE, "postprocess": POST} if model == "exported.onnx" else None)
    result = cli.invoke(app, ["run", "--model", str(target), "--task", "vision.cls", "--output-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert missing in result.output and "pass -c CONFIG with an Eval dataset" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert "Train" not in result.output


def test_an_exported_onnx_file_names_its_task(tmp_path):
    from helpers import linear_onnx

    linear_onnx(tmp_path / "exported.onnx", {"preprocess": PRE, "postprocess": POST})
    result = cli.invoke(app, ["run", "--model", str(tmp_path / "exported.onnx"), "--output-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "as vision.cls needs a dataset, which only a config gives" in result.output
