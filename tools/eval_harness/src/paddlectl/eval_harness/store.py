"""The local run store: every result is on disk, atomically, before MLflow hears of it.

``<output_dir>/runs/<local_id>/`` holds ``report.json`` (the source of truth), ``report.md``,
the latency histogram, the task's plots and ``state.json`` (pending or logged, and where).
``paddlectl eval sync`` uploads whatever is still pending.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paddlectl.framework.utils.fileio import atomic_write

from .errors import UsageError
from .report import Report, to_markdown

PENDING, LOGGED = "pending", "logged"


def write_text(path: Path, text: str) -> Path:
    """Write ``text`` atomically (temporary file, fsync, rename) and return the path."""
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def write_json(path: Path, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def local_id(self) -> str:
        return self.path.name

    @property
    def report_path(self) -> Path:
        return self.path / "report.json"

    def report(self) -> Report:
        return Report.read(self.report_path)

    def state(self) -> dict[str, Any]:
        try:
            return json.loads((self.path / "state.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"status": PENDING}

    def set_state(self, **state: Any) -> None:
        write_json(self.path / "state.json", {**self.state(), **state})

    def artifacts(self) -> list[Path]:
        """Files to attach to the MLflow run (everything but the bookkeeping)."""
        return sorted(
            p for p in self.path.rglob("*") if p.is_file() and p.name != "state.json" and not p.name.startswith(".")
        )


class LocalStore:
    def __init__(self, output_dir: Path) -> None:
        self.output_dir = Path(output_dir)
        self.root = self.output_dir / "runs"

    def create(self, report: Report) -> RunDir:
        """Write the report (JSON first, then Markdown) and mark the run pending."""
        run = self.run_dir(report.local_id)
        write_text(run.report_path, report.to_json())
        write_text(run.path / "report.md", to_markdown(report))
        run.set_state(status=PENDING)
        return run

    def run_dir(self, local_id: str) -> RunDir:
        return RunDir(self.root / local_id)

    def runs(self) -> list[RunDir]:
        if not self.root.is_dir():
            return []
        return [RunDir(p) for p in sorted(self.root.iterdir()) if (p / "report.json").is_file()]

    def pending(self) -> list[RunDir]:
        return [r for r in self.runs() if r.state().get("status") != LOGGED]

    def find(self, ref: str) -> RunDir | None:
        """A run by its local id or by the MLflow run id it was logged as."""
        for run in self.runs():
            if run.local_id == ref or run.state().get("run_id") == ref:
                return run
        return None

    def get(self, ref: str) -> RunDir:
        run = self.find(ref)
        if run is None:
            raise UsageError(f"no local run {ref!r} under {self.root}; pass --output-dir where it was evaluated")
        return run
