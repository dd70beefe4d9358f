"""The steps behind the commands: evaluate, record locally, log, and find reports again.

Kept apart from the CLI so tests and other tools can drive the same sequence in-process:
evaluate -> write report.json (atomic) and its companions -> log to MLflow (or keep pending).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import plots
from .errors import TrackingUnavailable, UsageError
from .evaluate import AccuracyPass
from .report import Report
from .store import LocalStore, RunDir
from .task import EvalTask
from .tracking import Tracker, default_uri


@dataclass
class Logged:
    run: RunDir
    run_id: str | None
    warning: str | None = None


def record(store: LocalStore, report: Report, acc: AccuracyPass, task: EvalTask) -> RunDir:
    """Draw the latency histogram and the task's plots, then write the report that lists them.

    A run directory without report.json is ignored by the store, so a crash while plotting
    leaves nothing half-recorded.
    """
    run = store.run_dir(report.local_id)
    plots.latency_histogram(report.latency_samples_ms, run.path / "latency_hist.png", f"{report.model_name} latency")
    drawn = task.plots(acc.predictions, acc.labels, run.path / "plots") if acc.predictions else []
    report.plots = ["latency_hist.png", *(Path(p).relative_to(run.path).as_posix() for p in drawn)]
    return store.create(report)


def tracker_for(output_dir: Path, tracking_uri: str | None) -> Tracker:
    return Tracker(tracking_uri or default_uri(output_dir), output_dir)


def log(run: RunDir, output_dir: Path, tracking_uri: str | None) -> Logged:
    """Log ``run``; an unreachable store leaves it pending with a warning instead of losing it."""
    try:
        tracker = tracker_for(output_dir, tracking_uri)
        return Logged(run, tracker.log(run))
    except TrackingUnavailable as exc:
        run.set_state(last_error=str(exc)[:500])
        return Logged(run, None, str(exc))


def sync(store: LocalStore, tracking_uri: str | None) -> list[Logged]:
    """Upload every pending local run; stops at the first unreachable store (it will not come back mid-loop)."""
    pending = store.pending()
    if not pending:
        return []
    tracker = tracker_for(store.output_dir, tracking_uri)
    return [Logged(run, tracker.log(run)) for run in pending]


def find_report(ref: str, store: LocalStore, tracker: Tracker | None) -> tuple[Report, str]:
    """A run's report by local id or MLflow run id: the local copy if present, else MLflow's artifact."""
    local = store.find(ref)
    if local is not None:
        return local.report(), local.state().get("run_id") or local.local_id
    if tracker is None:
        raise UsageError(f"run {ref!r} is neither a local run under {store.root} nor reachable in a tracking store")
    return tracker.report(ref), ref


def flat_config(config: dict[str, Any]) -> dict[str, Any]:
    """The resolved config as stored in the report (a plain, JSON-safe mapping)."""
    return json.loads(json.dumps(config, default=str))
