"""Failed requests grouped by cause: a report must say what failed and how often, not only a rate.

A run whose every request raised the same ``KeyError`` used to show ``error_rate 1`` and NaN
latencies, with the cause buried in report.json; grouping by cause lets ``eval run``, ``promote``
and the gate name it in one line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

KEEP = 5
"""Distinct causes kept per run (later ones are still counted in ``count``)."""


@dataclass
class Failures:
    """Inputs that failed, counted, with the first ``KEEP`` distinct causes and how many inputs each hit."""

    count: int = 0
    causes: dict[str, int] = field(default_factory=dict)

    def add(self, cause: str, inputs: int = 1) -> None:
        self.count += inputs
        cause = cause[:300]
        if cause in self.causes or len(self.causes) < KEEP:
            self.causes[cause] = self.causes.get(cause, 0) + inputs

    def merge(self, other: Failures) -> None:
        self.count += other.count
        for cause, inputs in other.causes.items():
            if cause in self.causes or len(self.causes) < KEEP:
                self.causes[cause] = self.causes.get(cause, 0) + inputs

    def to_dict(self, total: int) -> dict[str, Any]:
        """The report's ``errors`` section (``examples`` lists the causes, as format 1 always did)."""
        return {"count": self.count, "total": total, "examples": list(self.causes), "causes": dict(self.causes)}


def summary(errors: Mapping[str, Any]) -> str | None:
    """``"459 of 459 inputs failed: 459 x KeyError: 'image_mode'"``, or None when nothing failed."""
    count = errors.get("count") or 0
    if not count:
        return None
    causes = errors.get("causes") or dict.fromkeys(errors.get("examples") or [], 0)
    shown = "; ".join(f"{n} x {cause}" if n else cause for cause, n in list(causes.items())[:3])
    return f"{count} of {errors.get('total', '?')} inputs failed" + (f": {shown}" if shown else "")


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def promotion_problems(report) -> list[str]:
    """Why a run should not become the champion: any failed input, or no main metric to gate on."""
    problems = [why] if (why := summary(report.errors)) else []
    main = report.main_metric
    if main is None:
        problems.append("it records no main metric (the task names none and computed none)")
    elif not _finite(report.metrics.get(main)):
        problems.append(f"its main metric {main!r} was not computed")
    return problems


def usable_problem(report) -> str | None:
    """Why a run cannot serve as a champion or baseline (None when it can): every input failed,
    no latency sample, or its main metric missing."""
    why = summary(report.errors)
    if report.errors.get("count") and report.errors.get("count") >= (report.errors.get("total") or 0):
        return why
    if not any(report.latency_samples_ms.values()):
        return "no latency samples" + (f" ({why})" if why else "")
    main = report.main_metric
    value = report.metrics.get(main) if main else None
    if main and not _finite(value):
        return f"its main metric {main!r} is missing" + (f" ({why})" if why else "")
    return None
