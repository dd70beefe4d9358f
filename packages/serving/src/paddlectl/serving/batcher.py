"""Dynamic batching per model: requests wait in a bounded queue and run stacked, each with a deadline.

At most ``queue_size`` requests wait (queued, or in the batch being collected) before a new one is
refused. A collector takes the first waiting request, waits for a free worker (at most ``workers``
batches run at once, one predictor clone each), then takes every request queued meanwhile, up to
``max_batch_size``: under load the batch fills while the workers are busy, instead of closing
before a worker is free. Then it waits for more while the batch is under ``max_batch_size`` and
``max_delay_ms`` has not passed since its oldest request was queued (Triton's max_queue_delay): a
request that already waited that long for a worker runs with what is queued, at once. A request whose deadline
passes is answered 504 by its own handler and dropped from any batch not yet started, so a slow
batch never holds others past their deadlines; a full queue is a 503 with Retry-After at once.
Requests stack only with requests of the same per-row shape (a sequence model's lengths differ).
When a batch fails, each of its requests runs again alone, so one request whose input the model
refuses (an id past the vocabulary) gets its own 400 and poisons no one else's answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .errors import ServeError
from .settings import ModelSettings

log = logging.getLogger("paddlectl.serving")


@dataclass
class Pending:
    arrays: list[np.ndarray]
    rows: int
    deadline: float
    queued_at: float = field(default_factory=time.monotonic)
    future: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    @property
    def key(self) -> tuple:
        return tuple((a.shape[1:], a.dtype.str) for a in self.arrays)


class Batcher:
    """The queue and collector of one served name; ``model()`` gives the version to run now."""

    def __init__(self, name: str, model: Callable, settings: ModelSettings, observe: Callable[[str, float], None]):
        self.name, self._model, self.settings = name, model, settings
        self._observe = observe  # (metric, value): "batch_size" and "queue_depth"
        self._queue: asyncio.Queue[Pending] = asyncio.Queue()
        self._waiting = 0  # submitted and not yet started: queued, held or in the batch being collected
        self._slots = asyncio.Semaphore(settings.workers)
        self._held: Pending | None = None  # a request that could not join the last batch
        self._running: set[asyncio.Task] = set()
        self._collector: asyncio.Task | None = None

    def start(self) -> None:
        self._collector = asyncio.get_running_loop().create_task(self._collect(), name=f"batcher-{self.name}")

    async def stop(self) -> None:
        """Let running batches finish, then stop collecting (graceful shutdown)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        if self._collector is not None:
            self._collector.cancel()

    async def submit(self, arrays: list[np.ndarray], rows: int, deadline: float) -> tuple[list[np.ndarray], object]:
        """The outputs for one request's ``rows`` rows and the model version that ran them; ServeError 503/504."""
        if self._waiting >= self.settings.queue_size:
            raise ServeError(
                503,
                "queue_full",
                f"model {self.name!r} has {self.settings.queue_size} requests waiting; retry shortly",
                {"Retry-After": "1"},
            )
        pending = Pending(arrays, rows, deadline)
        self._queue.put_nowait(pending)
        self._waited(+1)
        try:  # a timeout (or the client going away) cancels the future, so the collector drops it
            async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
                return await pending.future
        except TimeoutError:
            raise ServeError(
                504,
                "deadline_exceeded",
                f"model {self.name!r} did not answer within {self.settings.timeout_ms:g} ms (timeout_ms); retry later",
            ) from None

    async def _next(self, timeout: float | None) -> Pending | None:
        """The held request, else the next queued one: waiting at most ``timeout`` seconds (None: for
        ever, 0: only what is queued now)."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        if not self._queue.empty():
            return self._queue.get_nowait()
        if timeout == 0:
            return None
        try:  # not wait_for: that wraps the get in a task of its own, once per request collected
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except TimeoutError:
            return None

    def _waited(self, change: int) -> None:
        self._waiting += change
        self._observe("queue_depth", self._waiting)

    async def _collect(self) -> None:
        while True:
            first = await self._next(None)
            if first.future.done():
                self._waited(-1)
                continue
            await self._slots.acquire()
            model = self._model()
            batch, rows = [first], first.rows
            close_at = first.queued_at + self.settings.max_delay_ms / 1000.0
            while model.batchable and rows < self.settings.max_batch_size:
                item = await self._next(max(close_at - time.monotonic(), 0))
                if item is None:
                    break
                if item.future.done():
                    self._waited(-1)
                    continue
                if item.key != first.key or rows + item.rows > self.settings.max_batch_size:
                    self._held = item
                    break
                batch.append(item)
                rows += item.rows
            self._waited(-len(batch))
            task = asyncio.get_running_loop().create_task(self._run(model, batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, model, batch: list[Pending]) -> None:
        try:
            live = [p for p in batch if not p.future.done() and p.deadline > time.monotonic()]
            if len(live) > 1:
                arrays = [np.concatenate(a) for a in zip(*(p.arrays for p in live), strict=True)]
                self._observe("batch_size", sum(p.rows for p in live))
                try:
                    outputs = await asyncio.to_thread(model.run, arrays)
                except Exception:  # noqa: BLE001 - one request's input may have failed the batch: run each alone
                    for p in live:
                        await self._alone(model, p)
                    return
                start = 0
                for p in live:
                    _settle(p, [o[start : start + p.rows] for o in outputs], model)
                    start += p.rows
            elif live:
                self._observe("batch_size", live[0].rows)
                await self._alone(model, live[0])
        finally:
            self._slots.release()

    async def _alone(self, model, pending: Pending) -> None:
        """Run one request by itself; its failure becomes its own error (400 for an input the model
        refuses, 500 model_failed otherwise)."""
        try:
            outputs = await asyncio.to_thread(model.run, pending.arrays)
        except Exception as exc:  # noqa: BLE001 - a model failure is this request's answer, never the server's
            if not pending.future.done():
                pending.future.set_exception(_failure(self.name, exc))
            return
        _settle(pending, outputs, model)


def _settle(pending: Pending, outputs: list[np.ndarray], model) -> None:
    if not pending.future.done():
        pending.future.set_result((outputs, model))


def _failure(name: str, exc: Exception) -> ServeError:
    from paddlectl.framework.errors import DataError, DTypeError, ShapeError

    if isinstance(exc, ShapeError | DTypeError | DataError):
        return ServeError(400, "bad_input", f"model {name!r} cannot run this input: {exc}")
    log.error("model %s failed: %r", name, exc)
    return ServeError(500, "model_failed", f"model {name!r} failed: {exc}")
