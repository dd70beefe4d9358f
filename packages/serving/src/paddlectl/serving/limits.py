"""Per-key rate limits (token bucket), daily request quotas and daily budget caps.

Days are UTC days. Quota and budget usage survive restarts: the counters of the current day are
written (atomically, at most once per ``flush_s`` and at ``close``) to a usage file beside the key
file, so a crash forgets at most ``flush_s`` seconds of usage. Rate buckets are not persisted: a
restart refills them, which is what a bucket does after any pause anyway.

A request's cost is reserved at admission (the caller's estimate) and corrected when it
finishes, so concurrent requests cannot overshoot a budget by more than their estimates' error.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from paddlectl.framework.utils.fileio import atomic_write

from .keys import KeyRecord, Rate


@dataclass(frozen=True)
class Refusal:
    """Why a request was refused and how many seconds until it could succeed."""

    code: str
    message: str
    retry_after_s: float


class TokenBucket:
    """``rate.tokens`` per ``rate.per_s`` seconds, bursts up to ``rate.tokens``; not thread-safe
    on its own (``Limits`` holds the lock)."""

    def __init__(self, rate: Rate, now: float) -> None:
        self.capacity = rate.tokens
        self.refill_per_s = rate.tokens / rate.per_s
        self.tokens = rate.tokens
        self.stamp = now

    def take(self, now: float) -> float:
        """Take one token; returns 0.0 when taken, else the seconds until one is available."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.refill_per_s)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.refill_per_s


def seconds_to_midnight(wall: float) -> float:
    now = datetime.fromtimestamp(wall, UTC)
    midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    return max(1.0, (midnight - now).total_seconds())


def day_of(wall: float) -> str:
    return datetime.fromtimestamp(wall, UTC).date().isoformat()


class Limits:
    """Rate, quota and budget bookkeeping for every key, behind one lock."""

    def __init__(self, usage_path: str | os.PathLike | None = None, flush_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.usage_path = Path(usage_path) if usage_path is not None else None
        self.flush_s = flush_s
        self.clock, self.wall = clock, wall
        self._lock, self._flush_lock = threading.Lock(), threading.Lock()
        self._buckets: dict[tuple[str, Rate], TokenBucket] = {}
        self._day = day_of(wall())
        self._admitted: dict[str, int] = {}
        self._spent: dict[str, float] = {}
        self._dirty, self._flushed = False, clock()
        self._load()

    def _load(self) -> None:
        """Today's counters from the usage file; another day's, or an unreadable file, start at zero."""
        if self.usage_path is None:
            return
        try:
            data = json.loads(self.usage_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return
        if not isinstance(data, dict) or data.get("day") != self._day:
            return
        for name, entry in (data.get("keys") or {}).items():
            if isinstance(entry, dict):
                self._admitted[name] = int(entry.get("requests", 0))
                self._spent[name] = float(entry.get("spent", 0.0))

    def _roll(self, wall: float) -> None:
        if day_of(wall) != self._day:
            self._day, self._admitted, self._spent, self._dirty = day_of(wall), {}, {}, True

    def reserve(self, record: KeyRecord, estimate: float) -> Refusal | None:
        """Count one request and reserve ``estimate`` of the budget, or say why not (nothing counted)."""
        now, wall = self.clock(), self.wall()
        with self._lock:
            self._roll(wall)
            name = record.name
            used, spent = self._admitted.get(name, 0), self._spent.get(name, 0.0)
            if record.quota_per_day is not None and used >= record.quota_per_day:
                return Refusal("quota_exceeded", f"key {name!r} used its {record.quota_per_day} requests for today (UTC)",
                               seconds_to_midnight(wall))  # fmt: skip
            if record.budget_per_day is not None and spent + estimate > record.budget_per_day:
                return Refusal("budget_exceeded", f"key {name!r} spent {spent:.4g} of its {record.budget_per_day:g} budget for today (UTC)",
                               seconds_to_midnight(wall))  # fmt: skip
            if record.rate is not None:
                bucket = self._buckets.setdefault((name, record.rate), TokenBucket(record.rate, now))
                wait = bucket.take(now)
                if wait > 0:
                    return Refusal("rate_limited", f"key {name!r} is over its rate limit of {record.rate}", wait)
            self._admitted[name] = used + 1
            self._spent[name] = spent + estimate
            self._dirty = True
        self._maybe_flush(now)
        return None

    def settle(self, name: str, day: str, estimate: float, cost: float) -> None:
        """Replace a reservation by the measured cost (a reservation from a past day is dropped)."""
        with self._lock:
            if day == self._day:
                self._spent[name] = max(0.0, self._spent.get(name, 0.0) + cost - estimate)
                self._dirty = True
        self._maybe_flush(self.clock())

    def usage(self, name: str) -> tuple[int, float]:
        """Today's (requests, spent) for key ``name``."""
        with self._lock:
            self._roll(self.wall())
            return self._admitted.get(name, 0), self._spent.get(name, 0.0)

    @property
    def day(self) -> str:
        return self._day

    def _maybe_flush(self, now: float) -> None:
        """Flush when due, unless another thread is flushing (requests never queue on the disk)."""
        if self.usage_path is None or not self._dirty or now - self._flushed < self.flush_s:
            return
        if self._flush_lock.acquire(blocking=False):
            try:
                self._write()
            finally:
                self._flush_lock.release()

    def flush(self) -> None:
        """Write today's counters now (the server calls it at shutdown)."""
        if self.usage_path is not None:
            with self._flush_lock:
                self._write()

    def _write(self) -> None:
        with self._lock:  # a snapshot; requests go on while it is written
            data = {"day": self._day, "keys": {n: {"requests": self._admitted.get(n, 0), "spent": self._spent.get(n, 0.0)}
                                               for n in sorted(set(self._admitted) | set(self._spent))}}  # fmt: skip
            self._dirty, self._flushed = False, self.clock()
        with atomic_write(self.usage_path, "w", encoding="utf-8", private=True) as handle:
            handle.write(json.dumps(data, indent=1) + "\n")


def retry_after_header(seconds: float) -> str:
    """Retry-After is whole seconds (RFC 9110), rounded up so a client never retries too early."""
    return str(max(1, math.ceil(seconds)))
