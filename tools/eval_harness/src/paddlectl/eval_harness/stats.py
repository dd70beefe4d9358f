"""Is the candidate really slower? A test on latency samples that noise does not fail.

A slowdown is a regression only if it is statistically significant *and* larger than the
allowed fraction: on a shared CI machine tiny shifts are always "significant" with enough
samples, and a large but noisy difference is not yet proven. Its size is measured on a low
quantile (default p25), because another process's load only ever adds time to some requests,
while a slower model adds time to all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import mannwhitneyu

from .settings import LatencyGate

REGRESSION, PASS, INCONCLUSIVE = "regression", "pass", "inconclusive"


@dataclass(frozen=True)
class LatencyComparison:
    verdict: str
    ratio: float
    """The configured low quantile of the candidate's latency over the baseline's."""
    detail: str
    p_value: float | None = None
    interval: tuple[float, float] | None = None


def compare_latency(
    candidate: Sequence[float], baseline: Sequence[float], gate: LatencyGate, seed: int = 0
) -> LatencyComparison:
    """Compare two latency samples with the configured test (Mann-Whitney U or a bootstrap interval)."""
    c, b = np.asarray(candidate, dtype=np.float64), np.asarray(baseline, dtype=np.float64)
    if min(c.size, b.size) < gate.min_samples:
        return LatencyComparison(
            INCONCLUSIVE, float("nan"),
            f"too few samples ({c.size} candidate, {b.size} baseline; need {gate.min_samples}): raise Eval.harness.repeats",
        )  # fmt: skip
    q = gate.quantile
    ratio = float(np.quantile(c, q) / np.quantile(b, q))
    limit = 1.0 + gate.max_slowdown
    if gate.test == "mannwhitney":
        p = float(mannwhitneyu(c, b, alternative="greater").pvalue)
        slower = p < gate.alpha and ratio > limit
        detail = (
            f"p{q * 100:g} x{ratio:.3f} (limit x{limit:.2f}), one-sided Mann-Whitney U p={p:.2g} (alpha {gate.alpha})"
        )
        return LatencyComparison(REGRESSION if slower else PASS, ratio, detail, p_value=p)
    rng = np.random.default_rng(seed)
    boot_c = np.quantile(c[rng.integers(0, c.size, (gate.resamples, c.size))], q, axis=1)
    boot_b = np.quantile(b[rng.integers(0, b.size, (gate.resamples, b.size))], q, axis=1)
    low, high = (float(x) for x in np.quantile(boot_c / boot_b, [gate.alpha, 1 - gate.alpha]))
    detail = f"p{q * 100:g} x{ratio:.3f}, bootstrap {1 - 2 * gate.alpha:.0%} interval [x{low:.3f}, x{high:.3f}] (limit x{limit:.2f})"
    return LatencyComparison(REGRESSION if low > limit else PASS, ratio, detail, interval=(low, high))
