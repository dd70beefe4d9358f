"""The training run's record: ``metrics.jsonl`` (one JSON object per logged step or evaluation) and
``loss_curve.png`` drawn from it.

Floats are written with ``repr`` precision, so two runs can be compared bit for bit from their
logs. A resumed run first drops records past its checkpoint, so the log reads as one
uninterrupted run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..utils.fileio import atomic_write

LOG_FILE = "metrics.jsonl"
CURVE_FILE = "loss_curve.png"


def read_records(path: str | os.PathLike) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            break  # a line cut short by a crash ends the readable log
    return records


class MetricsLog:
    """Append-only JSON lines, flushed after every record so a killed run keeps what it logged."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def truncate_after(self, step: int) -> None:
        """Keep only records up to global step ``step`` (resume from a checkpoint taken there)."""
        kept = [r for r in read_records(self.path) if r.get("step", 0) <= step]
        with atomic_write(self.path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in kept)

    def append(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def records(self) -> list[dict]:
        return read_records(self.path)


def plot_loss_curve(records: list[dict], path: str | os.PathLike, indicator: str | None = None) -> Path:
    """Training loss per step and, on a second axis, the eval ``indicator`` per evaluation."""
    from matplotlib.figure import Figure  # imported here: the framework must not pay for it at import

    train = [r for r in records if r.get("kind") == "train"]
    evals = [r for r in records if r.get("kind") == "eval" and indicator in r]
    fig = Figure(figsize=(7, 4), dpi=100)
    ax = fig.add_subplot()
    ax.plot([r["step"] for r in train], [r["loss"] for r in train], color="tab:blue", label="train loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.grid(alpha=0.3)
    if evals:
        twin = ax.twinx()
        twin.plot(
            [r["step"] for r in evals],
            [r[indicator] for r in evals],
            "o-",
            color="tab:orange",
            label=f"eval {indicator}",
        )
        twin.set_ylabel(f"eval {indicator}")
        lines = ax.get_lines() + twin.get_lines()
        ax.legend(lines, [line.get_label() for line in lines], loc="center right")
    fig.tight_layout()
    with atomic_write(path, "wb") as handle:
        fig.savefig(handle, format="png")
    return Path(path)
