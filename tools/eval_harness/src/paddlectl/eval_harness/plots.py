"""PNG plots: the latency histogram of a run and a metric's history over time.

Built on ``matplotlib.figure.Figure`` (no pyplot, no global backend state) and written
atomically like every other result.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from paddlectl.framework.utils.fileio import atomic_write


def _save(fig: Figure, path: Path) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    with atomic_write(path, "wb") as handle:
        handle.write(buffer.getvalue())
    return path


def latency_histogram(samples_ms: Mapping[str, Sequence[float]], path: Path, title: str) -> Path:
    """One histogram per batch size, with p50 and p99 marked."""
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot()
    for bs, samples in sorted(samples_ms.items(), key=lambda kv: int(kv[0])):
        if samples:
            ax.hist(samples, bins=40, alpha=0.55, label=f"batch {bs} (n={len(samples)})")
    ax.set_xlabel("latency per request (ms)")
    ax.set_ylabel("requests")
    ax.set_title(title)
    if any(samples_ms.values()):
        ax.legend()
    return _save(fig, path)


def history_plot(rows: Sequence[Mapping[str, Any]], metric: str, path: Path) -> Path:
    """The metric of each finished run against its start time."""
    fig = Figure(figsize=(8, 4))
    ax = fig.add_subplot()
    times = [dt.datetime.fromtimestamp(r["start_time"] / 1000, dt.UTC) for r in rows]
    ax.plot(times, [r["value"] for r in rows], marker="o")
    ax.set_xlabel("run start (UTC)")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} over {len(rows)} runs")
    fig.autofmt_xdate()
    return _save(fig, path)
