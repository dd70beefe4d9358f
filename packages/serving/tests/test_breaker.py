"""Every circuit breaker transition, on an injected clock."""

from __future__ import annotations

import pytest

from paddlectl.serving.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker
from paddlectl.serving.errors import ServeConfigError


class Clock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


def breaker(**kwargs):
    clock = Clock()
    args = {"error_rate": 0.5, "min_requests": 4, "window_s": 10.0, "cooldown_s": 5.0, "clock": clock} | kwargs
    return CircuitBreaker(**args), clock


def tripped(**kwargs):
    """A breaker opened by four failures at t=0 (cooldown until t=5)."""
    b, clock = breaker(**kwargs)
    for _ in range(4):
        b.record(False, 0.01)
    return b, clock


def test_stays_closed_below_min_requests_and_below_the_error_rate():
    b, _ = breaker()
    for _ in range(3):
        b.record(False, 0.01)
    assert b.state == CLOSED and b.allow()  # 3 failures, but fewer than min_requests calls
    b, _ = breaker()
    for ok in (True, True, True, False, True, True, False):
        b.record(ok, 0.01)
    assert b.state == CLOSED  # 2/7 < 0.5


def test_closed_to_open_on_error_rate_then_refuses():
    b, _ = breaker()
    for ok in (True, False, True, False):
        b.record(ok, 0.01)
    assert b.state == OPEN and not b.allow()


def test_slow_calls_count_as_bad():
    b, _ = breaker(latency_ms=100.0)
    for _ in range(4):
        b.record(True, 0.2)
    assert b.state == OPEN


def test_old_failures_leave_the_window():
    b, clock = breaker()
    for _ in range(3):
        b.record(False, 0.01)
    clock.t = 11.0
    b.record(False, 0.01)  # the first three are older than window_s: 1 call, below min_requests
    assert b.state == CLOSED


def test_open_to_half_open_after_cooldown_lets_one_probe_through():
    b, clock = tripped()
    clock.t = 4.9
    assert b.state == OPEN and not b.allow()
    clock.t = 5.0
    assert b.state == HALF_OPEN
    assert b.allow() and not b.allow()  # one probe at a time


def test_half_open_to_closed_on_a_good_probe():
    b, clock = tripped()
    clock.t = 5.0
    assert b.allow()
    b.record(True, 0.01)
    assert b.state == CLOSED and b.allow()
    for _ in range(3):
        b.record(False, 0.01)
    assert b.state == CLOSED  # the window restarted empty: 3 calls < min_requests


def test_half_open_to_open_on_a_bad_probe_with_a_new_cooldown():
    b, clock = tripped()
    clock.t = 5.0
    assert b.allow()
    b.record(False, 0.01)
    assert b.state == OPEN
    clock.t = 9.9
    assert b.state == OPEN
    clock.t = 10.0
    assert b.state == HALF_OPEN


def test_several_probes_must_all_succeed():
    b, clock = tripped(probes=2)
    clock.t = 5.0
    assert b.allow() and b.allow() and not b.allow()
    b.record(True, 0.01)
    assert b.state == HALF_OPEN
    b.record(True, 0.01)
    assert b.state == CLOSED


def test_a_probe_that_never_reports_is_replaced_after_a_cooldown():
    b, clock = tripped()
    clock.t = 5.0
    assert b.allow() and not b.allow()
    clock.t = 10.0
    assert b.allow()


def test_outcomes_of_calls_let_through_before_opening_change_nothing():
    b, clock = tripped()
    b.record(True, 0.01)
    clock.t = 5.0
    assert b.state == HALF_OPEN


@pytest.mark.parametrize(
    "kwargs", [{"error_rate": 0.0}, {"error_rate": 1.5}, {"min_requests": 0}, {"cooldown_s": 0}, {"latency_ms": -1}]
)
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ServeConfigError, match="breaker"):
        CircuitBreaker(**kwargs)
