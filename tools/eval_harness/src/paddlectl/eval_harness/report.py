"""The evaluation report: one JSON document that is the source of truth for a run.

It is written locally before anything is sent to MLflow, carries the raw latency samples the
gate's statistical test needs, and renders to the Markdown attached to the run.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .cost import CostModel
from .errors import UsageError

FORMAT_VERSION = 1


@dataclass
class Report:
    local_id: str
    created_at: str
    task: str
    model_path: str
    model_name: str
    experiment: str
    metrics: dict[str, float]
    latency_samples_ms: dict[str, list[float]]
    errors: dict[str, Any]
    config: dict[str, Any]
    versions: dict[str, str]
    git_sha: str | None
    machine: dict[str, Any]
    fingerprint: str
    plots: list[str] = field(default_factory=list)
    main_metric: str | None = None
    """The metric the task is judged by (the trainer's main indicator); promote and the gate need it."""
    cost: dict[str, Any] = field(default_factory=dict)
    """The price the cost metrics were computed at (machine, price, source, date); empty when not set."""
    format_version: int = FORMAT_VERSION

    def to_json(self) -> str:
        return json.dumps(_finite(asdict(self)), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "the report") -> Report:
        """A report read back (gate, promote, compare): its JSON must be an object of this format version whose
        fields have their declared types (pydantic); UsageError names the first fields that do not."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            problem = "nests too deeply" if isinstance(exc, RecursionError) else f"is not JSON ({exc})"
            raise UsageError(f"{where} {problem}; re-run the evaluation") from None
        if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
            found = data.get("format_version") if isinstance(data, dict) else type(data).__name__
            raise UsageError(f"{where}: report format {found!r} is not {FORMAT_VERSION}; re-run the evaluation")
        unknown = sorted(set(data) - {f.name for f in fields(cls)}) + sorted(
            set(data.get("cost") or {}) - {f.name for f in fields(CostModel)}
            if isinstance(data.get("cost"), dict)
            else []
        )
        if unknown:
            raise UsageError(f"{where}: unknown report fields {unknown}; re-run the evaluation")
        if isinstance(data.get("metrics"), dict):
            data["metrics"] = {k: (float("nan") if v is None else v) for k, v in data["metrics"].items()}
        try:
            report = _ADAPTER.validate_python(data)
            _COST.validate_python(report.cost)  # rendered as a CostModel
            return report
        except ValidationError as exc:
            wrong = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
            raise UsageError(f"{where} is malformed ({wrong}); re-run the evaluation") from None

    @classmethod
    def read(cls, path: Path) -> Report:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read the report {path}: {exc}; re-run the evaluation") from None
        return cls.from_json(text, str(path))

    def samples(self, batch_size: int) -> list[float]:
        return self.latency_samples_ms.get(str(batch_size), [])


_ADAPTER, _COST = TypeAdapter(Report), TypeAdapter(CostModel)


def _finite(value: Any) -> Any:
    """JSON has no NaN/Inf: write them as null so every JSON reader can load the report."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def to_markdown(report: Report) -> str:
    """A human summary of one run: accuracy, latency per batch size, errors, cost, environment."""
    m = report.metrics
    lines = [
        f"# Evaluation of `{report.model_name}` on `{report.task}`",
        "",
        f"run `{report.local_id}` at {report.created_at}, git `{report.git_sha or 'n/a'}`, "
        f"machine `{report.fingerprint}` ({report.machine.get('cpu')}, {report.machine.get('cpus')} CPUs)",
        "",
        "## Metrics",
        "",
        "| metric | value |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {_fmt(value)} |" for name, value in sorted(m.items())]
    lines += ["", f"Cost per 1,000 predictions: {CostModel(**report.cost).basis()}."]
    lines += ["", "## Errors", "", f"{report.errors.get('count', 0)} of {report.errors.get('total', 0)} inputs failed."]
    lines += [f"- {example}" for example in report.errors.get("examples", [])]
    return "\n".join(lines) + "\n"


def _fmt(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.6g}"
