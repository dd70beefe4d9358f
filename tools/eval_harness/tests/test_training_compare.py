"""`paddlectl eval training`: an AMP training run against its FP32 baseline (final metric, loss curves)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from paddlectl.eval_harness.cli import app

cli = CliRunner()


def _run_dir(path, losses, acc, first_step=1):
    """A run directory as `paddlectl train` leaves it: metrics.jsonl and latest/state.json."""
    (path / "latest").mkdir(parents=True)
    records = [
        {"kind": "train", "epoch": 1, "step": first_step + i, "loss": v, "lr": 0.1} for i, v in enumerate(losses)
    ]
    records.append({"kind": "eval", "epoch": 1, "step": len(losses), "loss": losses[-1], "acc": acc})
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    state = {"best": {"indicator": "acc", "value": acc, "epoch": 1}, "last_eval": {"loss": losses[-1], "acc": acc}}
    (path / "latest" / "state.json").write_text(json.dumps(state))
    return str(path)


def _judge(*args):
    return cli.invoke(app, ["training", *args, "--json"])


def test_a_close_run_passes_and_a_worse_one_regresses(tmp_path):
    base = _run_dir(tmp_path / "fp32", [2.0, 1.0, 0.5, 0.4], 0.950)
    close = _run_dir(tmp_path / "amp", [2.0, 1.05, 0.52, 0.41], 0.948)
    result = _judge(close, "--baseline", base)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["common_steps"] == 4 and abs(report["divergence"] - 0.08 / 4 / 0.975) < 1e-9
    worse = _run_dir(tmp_path / "worse", [2.0, 1.0, 0.5, 0.4], 0.930)
    assert _judge(worse, "--baseline", base).exit_code == 1  # 2 points below, past the 0.5-point default
    apart = _run_dir(tmp_path / "apart", [2.0, 1.8, 1.5, 1.2], 0.950)
    result = _judge(apart, "--baseline", base)
    assert result.exit_code == 1 and "curves part" in json.loads(result.output)["reason"]


def test_no_common_steps_is_inconclusive_and_a_missing_run_is_a_usage_error(tmp_path):
    base = _run_dir(tmp_path / "fp32", [2.0, 1.0], 0.9)
    other = _run_dir(tmp_path / "other", [1.0, 0.5], 0.9, first_step=10)  # logged at other steps
    assert _judge(other, "--baseline", base).exit_code == 3
    result = cli.invoke(app, ["training", str(tmp_path / "nothing"), "--baseline", base])
    assert result.exit_code == 2 and "not a training run directory" in result.output
