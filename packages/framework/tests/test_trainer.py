"""The trainer: accuracy on real digits, checkpoints, exact resume (epoch boundary and mid-epoch), atomic writes."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pytest

from paddlectl.framework import is_grad_enabled
from paddlectl.framework.config import load_config
from paddlectl.framework.errors import CheckpointError, ConfigError
from paddlectl.framework.hapi import checkpoint_dir
from paddlectl.framework.hapi.train_log import read_records
from paddlectl.framework.hapi.trainer import Trainer, train
from paddlectl.framework.vision.task import ClsTask

DIGITS = Path(__file__).parents[1] / "src/paddlectl/framework/vision/configs/digits_lenet.yml"


def _config(out: Path, *overrides: str) -> dict:
    return load_config(DIGITS, [f"Global.output_dir={out}", *overrides])


FAST = (
    "Train.dataset.test_fraction=0.8",  # 359 training digits: 12 steps an epoch
    "Eval.dataset.test_fraction=0.05",
    "Global.epochs=2",
    "Global.log_interval=1",
    "Optimizer.lr.T_max=2",
)
"""Small runs for the resume tests, where the numbers matter bit for bit, not the accuracy."""


def _losses(out: Path) -> list[tuple[int, float]]:
    return [(r["step"], r["loss"]) for r in read_records(out / "metrics.jsonl") if r["kind"] == "train"]


def _assert_same_weights(a: Path, b: Path) -> None:
    """Bit-identical model and optimizer arrays (parameter names differ between in-process runs)."""
    first, second = checkpoint_dir.read(a), checkpoint_dir.read(b)
    for key in ("model", "optimizer"):
        x, y = getattr(first, key), getattr(second, key)
        assert x.keys() == y.keys()
        for name in x:
            if name != "LR_Scheduler":
                np.testing.assert_array_equal(np.asarray(x[name]), np.asarray(y[name]), err_msg=name)
    assert first.optimizer["LR_Scheduler"] == second.optimizer["LR_Scheduler"]


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("digits")
    return out, train(ClsTask(), _config(out))


def test_digits_config_reaches_97_percent_on_held_out_digits(digits_run):
    out, result = digits_run
    assert not result.interrupted and result.epochs_done == 6
    assert result.last_eval["acc"] >= 0.97
    assert result.best["value"] >= 0.97 and result.best["indicator"] == "acc"


def test_run_directory_holds_checkpoints_log_and_curve(digits_run):
    out, result = digits_run
    assert {p.name for p in out.iterdir()} == {
        "latest", "best", *(f"epoch_{i}" for i in range(1, 7)), "metrics.jsonl", "loss_curve.png"
    }  # fmt: skip
    for name in ("latest", "best", "epoch_3"):
        assert sorted(p.name for p in (out / name).iterdir()) == sorted(checkpoint_dir.FILES)
    records = read_records(out / "metrics.jsonl")
    evals = [r for r in records if r["kind"] == "eval"]
    assert [r["epoch"] for r in evals] == [1, 2, 3, 4, 5, 6]
    best = json.loads((out / "best" / "state.json").read_text())
    assert best["best"]["value"] == max(r["acc"] for r in evals)
    assert best["epoch"] == best["best"]["epoch"]
    assert json.loads((out / "epoch_3" / "state.json").read_text())["global_step"] == 3 * 45
    train_records = [r for r in records if r["kind"] == "train"]
    assert all(r["lr"] > 0 and r["samples_per_s"] > 0 and r["samples_per_cpu_s"] > 0 for r in train_records)
    per_epoch = [sum(r["samples"] for r in train_records if r["epoch"] == e) for e in range(1, 7)]
    assert all(r["samples"] > 0 for r in train_records) and len(set(per_epoch)) == 1  # every row, once an epoch
    assert (out / "loss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = load_config(out / "latest" / "config.yml")
    assert saved["Global"]["output_dir"] == str(out)


def test_best_weights_reproduce_the_logged_accuracy(digits_run):
    out, result = digits_run
    config = load_config(out / "best" / "config.yml")
    trainer = Trainer(ClsTask(), config)
    trainer._build(None)
    trainer.model.set_state_dict(checkpoint_dir.model_weights(out / "best"))
    assert trainer.evaluate()["acc"] == result.best["value"]


def test_resume_at_an_epoch_boundary_reproduces_the_uninterrupted_losses(tmp_path):
    whole, part = tmp_path / "whole", tmp_path / "part"
    train(ClsTask(), _config(whole, *FAST))
    train(ClsTask(), _config(part, *FAST, "Global.epochs=1"))
    result = train(ClsTask(), _config(part, *FAST), resume=part / "latest")
    assert result.global_step == 24
    assert _losses(part) == _losses(whole)
    assert len(_losses(whole)) == 24
    _assert_same_weights(part / "latest", whole / "latest")


class _InterruptAt(ClsTask):
    """Sends this process SIGINT during step ``at``, as Ctrl-C in a terminal would."""

    def __init__(self, at: int) -> None:
        self.at, self.calls = at, 0

    def build_loss(self, config):
        loss = super().build_loss(config)

        def interrupting(out, label):
            self.calls += is_grad_enabled()  # training steps only, not evaluation batches
            if self.calls == self.at and is_grad_enabled():
                os.kill(os.getpid(), signal.SIGINT)
            return loss(out, label)

        return interrupting


def test_ctrl_c_mid_epoch_saves_and_resume_is_exact(tmp_path):
    augmenting = (
        *FAST,
        "Train.transforms=[{Resize: {size: [28, 28]}}, {RandomHorizontalFlip: {prob: 0.3}}, {ToTensor: {}}]",
    )
    whole, part = tmp_path / "whole", tmp_path / "part"
    train(ClsTask(), _config(whole, *augmenting))
    stopped = train(_InterruptAt(16), _config(part, *augmenting))
    assert stopped.interrupted and stopped.global_step == 16 and stopped.epochs_done == 1
    state = json.loads((part / "latest" / "state.json").read_text())
    assert (state["epoch"], state["step_in_epoch"], state["global_step"]) == (1, 4, 16)
    assert not (part / "epoch_2").exists()
    assert (part / "loss_curve.png").is_file()
    resumed = train(ClsTask(), _config(part, *augmenting), resume=part)
    assert not resumed.interrupted and resumed.global_step == 24
    assert _losses(part) == _losses(whole)
    _assert_same_weights(part / "latest", whole / "latest")


def test_resume_drops_log_records_past_the_checkpoint(tmp_path):
    out = tmp_path / "run"
    train(ClsTask(), _config(out, *FAST, "Global.epochs=1"))
    with open(out / "metrics.jsonl", "a") as handle:  # a crash after more steps were logged
        handle.write(json.dumps({"kind": "train", "epoch": 2, "step": 13, "loss": 9.0}) + "\n")
    train(ClsTask(), _config(out, *FAST), resume=out / "latest")
    steps = [s for s, _ in _losses(out)]
    assert steps == list(range(1, 25))


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "latest"
    checkpoint_dir.write(target, {"w": np.ones(2, "float32")}, {}, {"epoch": 1}, {"Global": {}})

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_dir, "save_config", broken)
    with pytest.raises(OSError, match="disk full"):
        checkpoint_dir.write(target, {"w": np.zeros(2, "float32")}, {}, {"epoch": 2}, {"Global": {}})
    assert [p.name for p in tmp_path.iterdir()] == ["latest"]
    assert checkpoint_dir.read(target).state["epoch"] == 1
    np.testing.assert_array_equal(checkpoint_dir.read(target).model["w"], np.ones(2))


def test_bad_resume_and_weights_fail_before_writing_anything(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(CheckpointError, match="does not exist"):
        train(ClsTask(), _config(out), resume=tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="not a training checkpoint"):
        train(ClsTask(), _config(out), resume=tmp_path / "empty")
    with pytest.raises(CheckpointError, match="weights .* do not exist"):
        train(ClsTask(), _config(out, f"Global.pretrained_model={tmp_path / 'none.pdparams'}"))
    with pytest.raises(ConfigError, match="Global.epochs must be a positive integer"):
        train(ClsTask(), _config(out, "Global.epochs=0"))
    assert not out.exists()


def test_checkpoint_of_another_task_is_refused(digits_run, tmp_path):
    out, _ = digits_run

    class Other(ClsTask):
        name = "vision.other"

    with pytest.raises(ConfigError, match="written by task 'vision.cls'"):
        train(Other(), _config(tmp_path / "o"), resume=out / "latest")


def test_importing_the_trainer_and_task_loads_neither_matplotlib_nor_scikit_learn():
    import subprocess
    import sys

    code = (
        "import sys, paddlectl.framework, paddlectl.framework.hapi.trainer, paddlectl.framework.vision.task;"
        "print(sorted(m for m in ('matplotlib', 'sklearn') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
