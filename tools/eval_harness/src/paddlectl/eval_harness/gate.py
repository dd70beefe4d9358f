"""The gate: may the candidate replace the baseline?

Per-metric thresholds from ``Eval.harness.thresholds`` plus the statistical latency test. By
default the task's main metric (higher is better, as the trainer's ``best/`` assumes) and the
error rate may not worsen at all; a candidate whose failed inputs exceed
``Eval.harness.max_error_rate`` fails with their cause named. Any regression fails (exit 1);
otherwise anything undecidable (no baseline, a baseline with no usable samples, missing metric,
too few samples, another machine) is inconclusive (exit 3); only a clean comparison passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from .failures import summary, usable_problem
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
        where = candidate if new is None else baseline
        side = "candidate" if new is None else "baseline"
        if rule.metric.startswith("cost_") and not where.cost:
            detail = (
                f"machine price not set in the {side}: set Eval.harness.cost.machine or cost.machine_price_per_hour"
            )
        else:
            failed = summary(where.errors)
            detail = f"metric missing or not finite in the {side}" + (f" ({failed})" if failed else "")
        return Check(rule.metric, INCONCLUSIVE, new, old, detail)
    worse_by = (old - new) if rule.direction == "higher" else (new - old)
    allowed = rule.allowance(old)
    status = REGRESSION if worse_by > allowed else PASS
    detail = f"{rule.direction} is better; worsened by {worse_by:.6g} (allowed {allowed:.6g})"
    return Check(rule.metric, status, new, old, detail)


def default_rules(candidate: Report, baseline: Report, settings: HarnessSettings) -> list[Threshold]:
    """The configured thresholds, plus the main metric and the error rate unless configured."""
    rules = {rule.metric: rule for rule in settings.thresholds}
    main = candidate.main_metric or baseline.main_metric
    if main and main not in rules:
        rules[main] = Threshold(main, "higher", absolute=0.0)
    rules.setdefault("error_rate", Threshold("error_rate", "lower", absolute=0.0))
    return list(rules.values())


def failed_inputs_check(candidate: Report, baseline: Report | None, settings: HarnessSettings) -> Check | None:
    """A regression when the candidate's failed inputs exceed ``max_error_rate``, with their cause."""
    rate = _number(candidate.metrics.get("error_rate"))
    if rate is None or rate <= settings.max_error_rate:
        return None
    old = _number(baseline.metrics.get("error_rate")) if baseline else None
    detail = f"{summary(candidate.errors)}; Eval.harness.max_error_rate is {settings.max_error_rate:g}"
    return Check("error_rate", REGRESSION, rate, old, detail)


def run_gate(
    candidate: Report,
    baseline: Report | None,
    settings: HarnessSettings,
    baseline_label: str | None = None,
    candidate_label: str | None = None,
    fix_baseline: str = "pass --baseline with a working run",
) -> GateResult:
    """Judge ``candidate`` against ``baseline``; ``fix_baseline`` says how to replace an unusable baseline."""
    result = GateResult(
        candidate_label or candidate.local_id, baseline_label or (baseline.local_id if baseline else None)
    )
    failed = failed_inputs_check(candidate, baseline, settings)
    if failed is not None:
        result.checks.append(failed)
    if baseline is None:
        result.reasons.append("no baseline: promote a run with `paddlectl eval promote RUN` or pass --baseline RUN")
        return result
    problem = usable_problem(baseline)
    if problem is not None:
        result.reasons.append(f"the baseline {result.baseline} has no usable samples ({problem}); {fix_baseline}")
        return result
    same_machine = candidate.fingerprint == baseline.fingerprint
    if not same_machine:
        result.reasons.append(
            f"machine fingerprints differ ({candidate.fingerprint} vs {baseline.fingerprint}): "
            "latency, cost and memory are not comparable; evaluate both on one machine"
        )
    for rule in default_rules(candidate, baseline, settings):
        if failed is not None and rule.metric == "error_rate":
            continue
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
        detail = outcome.detail
        if outcome.verdict == INCONCLUSIVE:  # too few samples: say when failed requests are why
            notes = [f"{side}: {why}" for side, r in (("candidate", candidate), ("baseline", baseline))
                     if (why := summary(r.errors))]  # fmt: skip
            detail += "".join(f"; {note}" for note in notes)
        checks.append(Check(f"latency_bs{bs} ({gate.test})", outcome.verdict, c_med, b_med, detail))
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
