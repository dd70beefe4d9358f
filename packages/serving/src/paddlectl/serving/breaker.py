"""A circuit breaker per model: stop sending requests to a primary that keeps failing.

closed -> open when, over the last ``window_s`` seconds and at least ``min_requests`` calls, the
share of bad calls (errors, or slower than ``latency_ms``) reaches ``error_rate``; open ->
half_open after ``cooldown_s``, where ``probes`` trial calls are let through; their success
closes the breaker, one bad probe opens it again for another cooldown. While it is not closed
the server answers from the fallback model.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from .errors import ServeConfigError

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"


class CircuitBreaker:
    def __init__(self, error_rate: float = 0.5, min_requests: int = 20, latency_ms: float | None = None,
                 window_s: float = 30.0, cooldown_s: float = 10.0, probes: int = 1,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        if not 0.0 < error_rate <= 1.0:
            raise ServeConfigError(f"breaker error_rate must be in (0, 1], got {error_rate!r}")
        if min_requests < 1 or probes < 1:
            raise ServeConfigError(f"breaker min_requests and probes must be >= 1, got {min_requests!r}, {probes!r}")
        if window_s <= 0 or cooldown_s <= 0 or (latency_ms is not None and latency_ms <= 0):
            raise ServeConfigError("breaker window_s, cooldown_s and latency_ms must be > 0")
        self.error_rate, self.min_requests, self.latency_ms = error_rate, min_requests, latency_ms
        self.window_s, self.cooldown_s, self.probes = window_s, cooldown_s, probes
        self.clock = clock
        self._lock = threading.Lock()
        self._calls: deque[tuple[float, bool]] = deque()  # (time, bad)
        self._bad = 0
        self._state = CLOSED
        self._opened_at = 0.0
        self._probing = 0  # probes let through and not yet recorded
        self._probe_ok = 0
        self._probe_started = 0.0

    @property
    def state(self) -> str:
        with self._lock:
            self._advance(self.clock())
            return self._state

    def allow(self) -> bool:
        """May the next call go to the primary? In half_open only ``probes`` calls at a time may."""
        with self._lock:
            self._advance(self.clock())
            if self._state == CLOSED:
                return True
            if self._state == HALF_OPEN:
                now = self.clock()
                if self._probing and now - self._probe_started >= self.cooldown_s:
                    self._probing = 0  # a probe that never reported back (its caller died) is given up on
                if self._probing + self._probe_ok < self.probes:
                    self._probing += 1
                    self._probe_started = now
                    return True
            return False

    def record(self, ok: bool, latency_s: float) -> None:
        """The outcome of a call ``allow`` let through."""
        now = self.clock()
        bad = (not ok) or (self.latency_ms is not None and latency_s * 1000.0 > self.latency_ms)
        with self._lock:
            self._advance(now)
            if self._state == HALF_OPEN:
                self._probing = max(0, self._probing - 1)
                if bad:
                    self._open(now)
                else:
                    self._probe_ok += 1
                    if self._probe_ok >= self.probes:
                        self._close()
            elif self._state == CLOSED:
                self._calls.append((now, bad))
                self._bad += bad
                self._expire(now)
                if len(self._calls) >= self.min_requests and self._bad >= self.error_rate * len(self._calls):
                    self._open(now)
            # OPEN: a call let through before the breaker opened; its outcome changes nothing

    def _advance(self, now: float) -> None:
        if self._state == OPEN and now - self._opened_at >= self.cooldown_s:
            self._state, self._probing, self._probe_ok = HALF_OPEN, 0, 0

    def _expire(self, now: float) -> None:
        while self._calls and now - self._calls[0][0] > self.window_s:
            self._bad -= self._calls.popleft()[1]

    def _open(self, now: float) -> None:
        self._state, self._opened_at = OPEN, now
        self._calls.clear()
        self._bad = 0

    def _close(self) -> None:
        self._state, self._probing, self._probe_ok = CLOSED, 0, 0
        self._calls.clear()
        self._bad = 0
