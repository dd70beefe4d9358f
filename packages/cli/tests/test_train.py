"""`paddlectl train` end to end: typer's runner for outcomes and errors, real processes for Ctrl-C and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from paddlectl.cli.app import app

runner = CliRunner()
DIGITS = str(files("paddlectl.framework.vision") / "configs" / "digits_lenet.yml")
SMALL = [
    "-o", "Train.dataset.test_fraction=0.8",  # 359 training digits, 12 steps an epoch
    "-o", "Eval.dataset.test_fraction=0.05",
    "-o", "Global.log_interval=1",
    "-o", "Optimizer.lr.T_max=2",
]  # fmt: skip


def _train(*args: str):
    return runner.invoke(app, ["train", "--quiet", *args])


def _losses(out: Path) -> list[tuple[int, float]]:
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return [(r["step"], r["loss"]) for r in map(json.loads, lines) if r["kind"] == "train"]


def _one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_train_writes_checkpoints_log_and_curve(tmp_path):
    out = tmp_path / "run"
    result = _train("-c", DIGITS, *SMALL, "-o", f"Global.output_dir={out}", "-o", "Global.epochs=2")
    assert result.exit_code == 0, result.output
    assert "best acc = " in result.output and str(out / "best") in result.output
    assert {"latest", "best", "epoch_1", "epoch_2", "metrics.jsonl", "loss_curve.png"} == {
        p.name for p in out.iterdir()
    }
    assert [s for s, _ in _losses(out)] == list(range(1, 25))
    state = json.loads((out / "latest" / "state.json").read_text())
    assert (state["epoch"], state["step_in_epoch"], state["global_step"]) == (2, 0, 24)


def test_progress_bar_shows_epoch_loss_lr_and_throughput(tmp_path):
    result = runner.invoke(
        app, ["train", "-c", DIGITS, *SMALL, "-o", f"Global.output_dir={tmp_path / 'r'}", "-o", "Global.epochs=1"]
    )
    assert result.exit_code == 0, result.output
    bar = next(line for line in result.output.splitlines() if line.startswith("epoch 1/1 "))
    assert "12/12" in bar and "loss " in bar and "lr 0.003" in bar and "img/s" in bar and "ETA" in bar
    assert "epoch 1/1 eval: loss=" in result.output


@pytest.mark.parametrize(
    ("override", "needles"),
    [
        ("Global.task=vision.clss", ("unknown task 'vision.clss'", "vision.cls")),
        ("Global.task=seg.unet", ("paddlectl-seg",)),
        ("Global.epoch=3", ("Global.epoch", "did you mean 'epochs'")),
        ("Architecture.num_clases=10", ("Architecture.num_clases", "did you mean 'num_classes'")),
        ("Train.loader.batchsize=8", ("did you mean 'batch_size'",)),
        ("Train.loader.shuffle=maybe", ("Train.loader", "shuffle should be a boolean")),
        ("Optimizer.lr.name=Cosine", ("Optimizer.lr.name is 'Cosine'", "CosineAnnealingDecay")),
        ("Global.pretrained_model=/nonexistent/lenet.pdparams", ("/nonexistent/lenet.pdparams", "do not exist")),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, override, needles):
    out = tmp_path / "never"
    result = _train("-c", DIGITS, "-o", f"Global.output_dir={out}", "-o", override)
    _one_line_error(result, *needles)
    assert not out.exists()


def test_missing_config_and_missing_checkpoint_are_usage_errors(tmp_path):
    _one_line_error(_train("-c", str(tmp_path / "none.yml")), "none.yml", "not found")
    _one_line_error(_train("--resume", str(tmp_path / "nowhere")), "does not exist")
    _one_line_error(_train(), "pass -c CONFIG.yml")


def test_unreadable_image_in_a_dataset_stops_with_exit_2_and_no_output(tmp_path):
    rng = np.random.default_rng(0)
    for c in ("a", "b"):
        (tmp_path / "data" / c).mkdir(parents=True)
        for i in range(4):
            Image.fromarray(rng.integers(0, 255, (20, 20, 3), dtype=np.uint8)).save(tmp_path / "data" / c / f"{i}.png")
    (tmp_path / "data" / "b" / "9.png").write_bytes(b"\x89PNG truncated")
    folder = str(files("paddlectl.framework.vision") / "configs" / "folder_mobilenetv3_small.yml")
    out = tmp_path / "out"
    result = _train(
        "-c", folder,
        "-o", f"Global.output_dir={out}", "-o", "Global.epochs=1",
        "-o", f"Train.dataset.root={tmp_path / 'data'}", "-o", f"Eval.dataset.root={tmp_path / 'data'}",
        "-o", "Train.loader={batch_size: 9, num_workers: 0}", "-o", "Architecture.num_classes=2",
        "-o", "Train.transforms=[{Resize: {size: [32, 32]}}, {ToTensor: {}}]",
        "-o", "Eval.transforms=[{Resize: {size: [32, 32]}}, {ToTensor: {}}]",
        "-o", "Export.input_shape=[3, 32, 32]", "-o", "Metric.topk=[1]", "-o", "Metric.main_indicator=acc",
    )  # fmt: skip
    _one_line_error(result, "9.png", "cannot read image")
    assert not out.exists()


def _wait_for_steps(log: Path, proc: subprocess.Popen, count: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and sum('"kind": "train"' in line for line in log.read_text().splitlines()) >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"training exited early: {proc.communicate()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("training logged no steps in time")


def test_ctrl_c_stops_a_real_process_with_a_checkpoint_and_resume_matches(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "paddlectl.cli", "train", "--quiet", "-c", DIGITS, *SMALL]
    proc = subprocess.Popen(
        [*cmd, "-o", f"Global.output_dir={out}", "-o", "Global.epochs=1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    _wait_for_steps(out / "metrics.jsonl", proc, 3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    assert f"resume with: paddlectl train --resume {out / 'latest'}" in " ".join(stdout.split())
    state = json.loads((out / "latest" / "state.json").read_text())
    assert state["global_step"] >= 3
    epochs = state["epoch"] + 1  # finish the interrupted epoch
    assert not list(out.glob(".*tmp*")), "no half-written checkpoint is left"

    resumed = subprocess.run(
        [sys.executable, "-m", "paddlectl.cli", "train", "--quiet", "--resume", str(out / "latest"),
         "-o", f"Global.epochs={epochs}"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    whole = tmp_path / "whole"
    result = _train("-c", DIGITS, *SMALL, "-o", f"Global.output_dir={whole}", "-o", f"Global.epochs={epochs}")
    assert result.exit_code == 0, result.output
    assert _losses(out) == _losses(whole)
    assert len(_losses(out)) == 12 * epochs


def test_a_second_ctrl_c_still_leaves_the_resume_hint(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "paddlectl.cli", "train", "--quiet", "-c", DIGITS, *SMALL,
         "-o", f"Global.output_dir={out}", "-o", "Global.epochs=1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    _wait_for_steps(out / "metrics.jsonl", proc, 14)  # epoch 1 (12 steps) is checkpointed in latest/
    proc.send_signal(signal.SIGINT)
    time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    assert f"resume with: paddlectl train --resume {out / 'latest'}" in " ".join(stdout.split())
    assert json.loads((out / "latest" / "state.json").read_text())["global_step"] >= 12
