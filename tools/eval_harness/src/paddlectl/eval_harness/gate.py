"""The gate: may the candidate replace the baseline?

Per-metric thresholds from ``Eval.harness.thresholds`` plus the statistical latency test.
Any regression fails (exit 1); otherwise anything undecidable (no baseline, missing metric,
too few samples, another machine) is inconclusive (exit 3); only a clean comparison passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .report import Report
from .settings import HarnessSettings, Threshold
from .stats import INCONCLUSIVE, PASS, REGRESSION, compare_latency

EXIT = {PASS: 0, REGRESSION: 1, INCONCLUSIVE: 3}
MACHINE_BOUND = ("latency_", "throughput", "cost_", "cold_start_", "peak_rss")
ORDER = {REGRESSION: 0, INCONCLUSIVE: 1, PASS: 2}


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    candidate: float | None
    baseline: float | None
    detail: str


@dataclass
class GateResult:
    candidate: str
    baseline: str | None
    checks: list[Check] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        statuses = {c.status for c in self.checks}
        if REGRESSION in statuses:
            return REGRESSION
        if INCONCLUSIVE in statuses or self.reasons or not self.checks:
            return INCONCLUSIVE
        return PASS

    @property
    def exit_code(self) -> int:
        return EXIT[self.status]

    def ordered(self) -> list[Check]:
        """Regressions first, then inconclusive checks, then passes."""
        return sorted(self.checks, key=lambda c: (ORDER[c.status], c.name))

    def summary(self) -> str:
        counts = {s: sum(c.status == s for c in self.checks) for s in ORDER}
        word = {PASS: "PASS", REGRESSION: "FAIL", INCONCLUSIVE: "INCONCLUSIVE"}[self.status]
        head = f"{word}: {self.candidate} vs {self.baseline or 'no baseline'}: "
        head += f"{counts[REGRESSION]} regression(s), {counts[INCONCLUSIVE]} inconclusive, {counts[PASS]} passed"
        return head + (f" ({'; '.join(self.reasons)})" if self.reasons else "")

    def to_dict(self) -> dict:
        return {
            "status": self.status, "exit_code": self.exit_code, "summary": self.summary(),
            "candidate": self.candidate, "baseline": self.baseline, "reasons": self.reasons,
            "checks": [asdict(c) for c in self.ordered()],
        }  # fmt: skip


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def check_threshold(rule: Threshold, candidate: Report, baseline: Report) -> Check:
    new, old = _number(candidate.metrics.get(rule.metric)), _number(baseline.metrics.get(rule.metric))
    if new is None or old is None:
        where = "candidate" if new is None else "baseline"
        return Check(rule.metric, INCONCLUSIVE, new, old, f"metric missing or not finite in the {where}")
    worse_by = (old - new) if rule.direction == "higher" else (new - old)
    allowed = rule.allowance(old)
    status = REGRESSION if worse_by > allowed else PASS
    detail = f"{rule.direction} is better; worsened by {worse_by:.6g} (allowed {allowed:.6g})"
    return Check(rule.metric, status, new, old, detail)


def run_gate(
    candidate: Report, baseline: Report | None, settings: HarnessSettings, baseline_label: str | None = None
) -> GateResult:
    result = GateResult(candidate.local_id, baseline_label or (baseline.local_id if baseline else None))
    if baseline is None:
        result.reasons.append("no baseline: promote a run with `paddlectl eval promote RUN` or pass --baseline RUN")
        return result
    same_machine = candidate.fingerprint == baseline.fingerprint
    if not same_machine:
        result.reasons.append(
            f"machine fingerprints differ ({candidate.fingerprint} vs {baseline.fingerprint}): "
            "latency, cost and memory are not comparable; evaluate both on one machine"
        )
    for rule in settings.thresholds:
        check = check_threshold(rule, candidate, baseline)
        if not same_machine and rule.metric.startswith(MACHINE_BOUND):
            check = Check(check.name, INCONCLUSIVE, check.candidate, check.baseline, "other machine")
        result.checks.append(check)
    if same_machine:
        result.checks += _latency_checks(candidate, baseline, settings)
    return result


def _latency_checks(candidate: Report, baseline: Report, settings: HarnessSettings) -> list[Check]:
    gate = settings.latency_gate
    sizes = (
        [str(gate.batch_size)]
        if gate.batch_size
        else sorted(set(candidate.latency_samples_ms) & set(baseline.latency_samples_ms), key=int)
    )
    if not sizes:
        return [Check("latency", INCONCLUSIVE, None, None, "no batch size measured in both runs")]
    checks = []
    for bs in sizes:
        outcome = compare_latency(candidate.samples(int(bs)), baseline.samples(int(bs)), gate)
        c_med = candidate.metrics.get(f"latency_p50_ms_bs{bs}")
        b_med = baseline.metrics.get(f"latency_p50_ms_bs{bs}")
        checks.append(Check(f"latency_bs{bs} ({gate.test})", outcome.verdict, c_med, b_med, outcome.detail))
    return checks


def to_markdown(result: GateResult) -> str:
    """A summary fit for a pull-request comment: the verdict, then the table, regressions first."""
    icon = {PASS: "✅", REGRESSION: "❌", INCONCLUSIVE: "⚠️"}
    lines = [f"### {icon[result.status]} {result.summary()}", ""]
    lines += [f"- {reason}" for reason in result.reasons]
    if result.checks:
        lines += ["", "| | check | candidate | baseline | detail |", "| --- | --- | --- | --- | --- |"]
        for c in result.ordered():
            lines.append(f"| {icon[c.status]} | {c.name} | {_fmt(c.candidate)} | {_fmt(c.baseline)} | {c.detail} |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6g}"
