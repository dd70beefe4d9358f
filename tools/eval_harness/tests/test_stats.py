import numpy as np
import pytest

from paddlectl.eval_harness.settings import LatencyGate
from paddlectl.eval_harness.stats import INCONCLUSIVE, PASS, REGRESSION, compare_latency


def _samples(seed: int, scale: float, n: int = 200) -> np.ndarray:
    """Latency-like samples: a floor plus a long right tail."""
    rng = np.random.default_rng(seed)
    return scale * (1.0 + rng.gamma(2.0, 0.1, n))


@pytest.mark.parametrize("test", ["mannwhitney", "bootstrap"])
def test_same_distribution_passes_and_a_doubling_fails(test):
    gate = LatencyGate(test=test)
    base = _samples(1, 1.0)
    assert compare_latency(_samples(2, 1.0), base, gate).verdict == PASS
    slow = compare_latency(_samples(3, 2.0), base, gate)
    assert slow.verdict == REGRESSION
    assert slow.ratio == pytest.approx(2.0, rel=0.1)


def test_a_significant_but_small_shift_is_not_a_regression():
    gate = LatencyGate(max_slowdown=0.2)
    outcome = compare_latency(_samples(4, 1.05, 2000), _samples(5, 1.0, 2000), gate)
    assert outcome.p_value < gate.alpha
    assert outcome.verdict == PASS


def test_too_few_samples_is_inconclusive():
    outcome = compare_latency([1.0] * 5, [1.0] * 100, LatencyGate(min_samples=20))
    assert outcome.verdict == INCONCLUSIVE
    assert "Eval.harness.repeats" in outcome.detail


def test_bootstrap_interval_brackets_the_ratio():
    outcome = compare_latency(_samples(6, 1.5), _samples(7, 1.0), LatencyGate(test="bootstrap"))
    low, high = outcome.interval
    assert low < outcome.ratio < high


def test_timed_requests_start_after_background_kernels_are_compiled(monkeypatch):
    """A cold kernel cache: the framework compiles in the background and runs NumPy references
    meanwhile; the timed loop waits for it after the warm-up, so it times the compiled model."""
    from paddlectl.eval_harness.latency import TimedRequests, time_requests
    from paddlectl.framework.kernels import background

    events = []
    monkeypatch.setattr(background, "wait", lambda timeout=None: events.append("wait") or True)
    result = time_requests(lambda raw: events.append(raw) or raw, lambda i: i, TimedRequests(1), 3, 4, lambda out: None)
    assert events == [0, 1, 2, "wait", 3, 4, 5, 6]
    assert len(result.samples_ms) == 4
