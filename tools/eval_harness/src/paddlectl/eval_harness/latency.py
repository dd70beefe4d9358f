"""Latency statistics and the timed request loop.

A request is the task's pre-processing, the model run and the post-processing, timed with
``perf_counter_ns`` around exactly that; warm-up requests are run and discarded first so JIT
compilation and cache filling do not pollute p99, and kernels the framework compiles in the
background are waited for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .failures import Failures


def summarize(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean/std of latency samples in milliseconds (NaN when there are none)."""
    values = np.asarray(samples_ms, dtype=np.float64)
    if values.size == 0:
        return {k: float("nan") for k in ("p50", "p95", "p99", "mean", "std")}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "p50": float(p50),
        "p95": float(p95),
        "p99": float(p99),
        "mean": float(values.mean()),
        "std": float(values.std()),
    }


@dataclass
class TimedRequests:
    """The outcome of one batch size's timed loop."""

    batch_size: int
    samples_ms: list[float] = field(default_factory=list)
    failures: Failures = field(default_factory=Failures)
    """Failed inputs (a failed request counts all ``batch_size`` of its inputs), by cause."""
    wall_s: float = 0.0

    @property
    def failed_requests(self) -> int:
        return self.failures.count // self.batch_size

    @property
    def throughput(self) -> float:
        """Predictions per second over the successful requests' own time."""
        total_s = sum(self.samples_ms) / 1e3
        return self.batch_size * len(self.samples_ms) / total_s if total_s > 0 else 0.0


KERNELS_TIMEOUT_S = 900
"""How long the timed loop waits, after its warm-up, for kernels the framework compiles in the
background (a cold cache): the latency measured is the compiled model's."""


def time_requests(
    request: Callable[[Sequence[Any]], object],
    batches: Callable[[int], Sequence[Any]],
    result: TimedRequests,
    warmup: int,
    repeats: int,
    is_error: Callable[[object], str | None],
) -> TimedRequests:
    """Run ``warmup`` then ``repeats`` requests into ``result``; an exception or failed check is an error.

    ``batches(i)`` gives the i-th batch of raw inputs (prepared before timing starts, so slicing
    the data set is not measured); ``is_error`` inspects a request's result for format problems.
    Called once per round, so samples of one batch size are spread over the whole measurement.
    """
    from paddlectl.framework.kernels import background  # here: `eval --help` imports no framework

    offset = len(result.samples_ms) + result.failed_requests
    prepared = [batches(offset + i) for i in range(warmup + repeats)]
    clock = time.perf_counter_ns
    start_wall = clock()
    for i, raw in enumerate(prepared):
        if i == warmup:  # kernels still compiling in the background would time their NumPy references
            waited = clock()
            background.wait(KERNELS_TIMEOUT_S)
            start_wall += clock() - waited
        t0 = clock()
        try:
            out = request(raw)
        except Exception as exc:  # noqa: BLE001 - an input that raised is a measured error, not a crash
            if i >= warmup:
                result.failures.add(f"{type(exc).__name__}: {exc}", result.batch_size)
            continue
        elapsed = clock() - t0
        if i < warmup:
            continue
        problem = is_error(out)
        if problem is not None:
            result.failures.add(problem, result.batch_size)
        else:
            result.samples_ms.append(elapsed / 1e6)
    result.wall_s += (clock() - start_wall) / 1e9
    return result


def split_rounds(repeats: int, rounds: int) -> list[int]:
    """``repeats`` spread as evenly as possible over ``rounds`` (never more rounds than repeats)."""
    rounds = max(1, min(rounds, repeats))
    return [repeats // rounds + (1 if r < repeats % rounds else 0) for r in range(rounds)]
