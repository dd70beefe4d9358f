"""Token buckets, daily quotas and budgets (injected clocks), their persistence, and the Gate."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paddlectl.serving import keys
from paddlectl.serving.access import ANONYMOUS, Gate, usage_path_for
from paddlectl.serving.errors import ServeConfigError, ServeError
from paddlectl.serving.limits import Limits, TokenBucket, seconds_to_midnight

DAY = 1_780_000_000.0  # 2026-05-28 20:26:40 UTC


class Clock:
    def __init__(self, t: float = 0.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def record(name="k", rate=None, quota=None, budget=None):
    return keys.KeyRecord(name, "dev", "0" * 64, "", keys.parse_rate(rate) if rate else None, quota, budget)


def test_bucket_bursts_then_refills_at_the_rate():
    bucket = TokenBucket(keys.Rate(3, 1.0), now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(1 / 3)
    assert bucket.take(0.2) == pytest.approx(1 / 3 - 0.2)
    assert bucket.take(1 / 3) == 0.0
    assert bucket.take(100.0) == 0.0 and bucket.tokens == pytest.approx(2.0)  # capped at the burst


def test_rate_refusal_counts_nothing_and_says_when_to_retry():
    clock = Clock()
    limits = Limits(clock=clock, wall=lambda: DAY)
    rec = record(rate="2/s", quota=100)
    assert limits.reserve(rec, 0.0) is None and limits.reserve(rec, 0.0) is None
    refusal = limits.reserve(rec, 0.0)
    assert refusal.code == "rate_limited" and refusal.retry_after_s == pytest.approx(0.5)
    assert limits.usage("k") == (2, 0.0)
    clock.t = 0.5
    assert limits.reserve(rec, 0.0) is None


def test_quota_resets_at_utc_midnight():
    wall = Clock(DAY)
    limits = Limits(wall=wall)
    rec = record(quota=2)
    assert limits.reserve(rec, 0) is None and limits.reserve(rec, 0) is None
    refusal = limits.reserve(rec, 0)
    assert refusal.code == "quota_exceeded" and refusal.retry_after_s == pytest.approx(seconds_to_midnight(DAY))
    wall.t = DAY + seconds_to_midnight(DAY)
    assert limits.reserve(rec, 0) is None and limits.usage("k") == (1, 0.0)


def test_budget_reserves_estimates_and_settles_measured_cost():
    limits = Limits(wall=lambda: DAY)
    rec = record(budget=1.0)
    assert limits.reserve(rec, 0.4) is None and limits.reserve(rec, 0.4) is None
    assert limits.reserve(rec, 0.4).code == "budget_exceeded"  # 1.2 > 1.0 with two in flight
    limits.settle("k", limits.day, 0.4, 0.1)
    assert limits.usage("k")[1] == pytest.approx(0.5)
    assert limits.reserve(rec, 0.4) is None
    limits.settle("k", "1999-01-01", 0.4, 9.0)  # a reservation from another day is dropped
    assert limits.usage("k")[1] == pytest.approx(0.9)


def test_usage_survives_a_restart_the_same_day_only(tmp_path):
    path = tmp_path / "keys.usage.json"
    first = Limits(path, wall=lambda: DAY)
    rec = record(quota=3)
    for _ in range(3):
        assert first.reserve(rec, 0.25) is None
    first.flush()
    assert json.loads(path.read_text())["keys"]["k"] == {"requests": 3, "spent": 0.75}
    again = Limits(path, wall=lambda: DAY)
    assert again.reserve(rec, 0).code == "quota_exceeded"
    tomorrow = Limits(path, wall=lambda: DAY + 86400)
    assert tomorrow.usage("k") == (0, 0.0)


def test_usage_is_flushed_while_serving_not_only_at_shutdown(tmp_path):
    clock = Clock()
    path = tmp_path / "u.json"
    limits = Limits(path, flush_s=1.0, clock=clock, wall=lambda: DAY)
    limits.reserve(record(), 0)
    assert not path.exists()
    clock.t = 1.5
    limits.reserve(record(), 0)
    assert json.loads(path.read_text())["keys"]["k"]["requests"] == 2


def test_concurrent_reservations_never_exceed_the_quota():
    limits = Limits(wall=lambda: DAY)
    rec = record(quota=500)
    admitted = []

    def worker():
        admitted.append(sum(limits.reserve(rec, 0) is None for _ in range(200)))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(admitted) == 500 and limits.usage("k") == (500, 0.0)


@pytest.fixture
def keyfile(tmp_path):
    path = tmp_path / "keys.json"
    made = {name: keys.add(path, name, env, **limits)[1] for name, env, limits in [
        ("dev1", "dev", {}), ("prod1", "prod", {"rate": "1/min"}), ("gone", "prod", {}),
        ("cheap", "prod", {"budget": "0.01/day"}),
    ]}  # fmt: skip
    keys.revoke(path, "gone")
    return path, made


def refused(gate, header, model="m"):
    with pytest.raises(ServeError) as info:
        gate.admit(header, model)
    return info.value


def test_gate_answers_each_refusal_with_its_status_and_code(keyfile):
    path, made = keyfile
    gate = Gate(path, "prod", cost_of=lambda model, batch: 0.006 * batch)
    assert (refused(gate, None).status, refused(gate, None).code) == (401, "missing_key")
    assert refused(gate, "Basic abc").code == "bad_key"
    assert refused(gate, "Bearer " + made["prod1"] + "x").code == "bad_key"
    assert (refused(gate, "Bearer " + made["gone"]).status, refused(gate, "Bearer " + made["gone"]).code) == (
        403,
        "revoked_key",
    )
    assert refused(gate, "Bearer " + made["dev1"]).code == "wrong_env"
    admission = gate.admit("Bearer " + made["prod1"], "m")
    assert (admission.key_name, admission.key_env) == ("prod1", "prod")
    limited = refused(gate, "bearer  " + made["prod1"])
    assert (limited.status, limited.code, limited.headers["Retry-After"]) == (429, "rate_limited", "60")
    cheap = gate.admit("Bearer " + made["cheap"], "m")
    assert cheap.estimate == pytest.approx(0.006)
    assert refused(gate, "Bearer " + made["cheap"]).code == "budget_exceeded"
    gate.settle(cheap, 0.001)
    assert gate.admit("Bearer " + made["cheap"], "m").key_name == "cheap"
    for error in (refused(gate, None), limited):
        assert made["prod1"] not in error.message and set(error.body()["error"]) == {"code", "message"}


def test_gate_without_env_accepts_every_environment(keyfile):
    path, made = keyfile
    gate = Gate(path, None)
    assert {gate.admit("Bearer " + made[n], "m").key_env for n in ("dev1", "prod1")} == {"dev", "prod"}
    assert usage_path_for(path).name == "keys.usage.json"


def test_gate_without_keys_admits_everyone_and_needs_keys_for_env():
    assert Gate(None, None).admit(None, "m").key_name == ANONYMOUS
    with pytest.raises(ServeConfigError, match="needs --keys"):
        Gate(None, "prod")


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.integers(1, 20),
    per_s=st.sampled_from([1.0, 60.0]),
    gaps=st.lists(st.floats(0.0, 2.0, allow_nan=False), min_size=1, max_size=200),
)
def test_a_bucket_never_admits_more_than_its_burst_plus_its_rate(tokens, per_s, gaps):
    """Over any run of requests, admitted <= burst + rate * elapsed (the token bucket's contract)."""
    bucket, now, admitted = TokenBucket(keys.Rate(tokens, per_s), 0.0), 0.0, 0
    for gap in gaps:
        now += gap
        wait = bucket.take(now)
        admitted += wait == 0.0
        assert wait >= 0.0
        assert admitted <= tokens + tokens / per_s * now + 1e-9


def test_a_key_named_anonymous_is_settled_like_any_other(tmp_path):
    path = tmp_path / "keys.json"
    _, key = keys.add(path, "anonymous", "dev", budget="1.0/day")
    gate = Gate(path, None, cost_of=lambda model, batch: 0.5)
    admission = gate.admit("Bearer " + key, "m")
    gate.settle(admission, 0.125)
    assert gate.limits.usage("anonymous") == (1, 0.125)
