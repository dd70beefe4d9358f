"""The served models as the routes see them: load and warm up, run with fallback and breaker, reload.

Each served name is a ``Slot``: the current ``ServedModel`` version, its ``Batcher``, its breaker
and output check. A request runs on the slot's primary; when the breaker is open, the queue is
full or the model fails, it runs on the slot's fallback (another served name) instead, so a
failing primary costs no failed request while the fallback answers. Reload loads and warms the
new version beside the old one and swaps the reference the batcher reads, so no request fails.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from paddlectl.framework.errors import PaddlectlError

from .batcher import Batcher
from .errors import ServeConfigError, ServeError
from .metrics import Metrics
from .model import ServedModel, cost_per_item, open_export
from .settings import ModelSettings, ServeSettings

log = logging.getLogger("paddlectl.serving")
FALLBACK_CODES = ("queue_full", "model_failed", "breaker_open")


@dataclass
class Slot:
    name: str
    settings: ModelSettings
    model: ServedModel
    batcher: Batcher | None = None
    breaker: Any = None
    check: Any = None
    cost: float = 0.0
    reloading: asyncio.Lock = field(default_factory=asyncio.Lock)
    generating: asyncio.Semaphore | None = None  # token streams at once: each holds a predictor clone per step

    def __post_init__(self) -> None:
        self.generating = asyncio.Semaphore(self.settings.workers)

    def deadline(self) -> float:
        return time.monotonic() + self.settings.timeout_ms / 1000.0


def _load(name: str, path, version: int, settings: ModelSettings) -> ServedModel:
    model = ServedModel(name, path, version, settings.workers)
    model.warm_up(settings.max_batch_size)
    return model


class Service:
    def __init__(self, settings: ServeSettings, metrics: Metrics) -> None:
        self.settings, self.metrics = settings, metrics
        self.slots: dict[str, Slot] = {}
        self.ready = False
        self.failure: str | None = None

    async def start(self) -> None:
        """Load and warm every model (in a thread: /v2/health/live answers meanwhile), then go ready."""
        try:
            for name, path in self.settings.models.items():
                settings = self.settings.model(name)
                model = await asyncio.to_thread(_load, name, path, 1, settings)
                slot = Slot(
                    name, settings, model, breaker=_breaker(name, settings), check=_check(name, model.task, settings)
                )
                slot.cost = cost_per_item(settings.cost, model.throughput)
                slot.batcher = Batcher(name, lambda s=slot: s.model, settings, self.metrics.observer(name))
                slot.batcher.start()
                self.slots[name] = slot
                self.metrics.version.labels(name).set(1)
                if slot.breaker is not None:
                    self.metrics.breaker_state(name, slot.breaker.state)
                warm = f"{model.throughput:.0f} items/s warm" if model.throughput else "cold"
                log.info("model %s ready: %s (task %s, %s)", name, path, model.task_name, warm)
        except Exception as exc:  # noqa: BLE001 - reported by /v2/health/ready and the log, the server stays up
            self.failure = str(exc)
            log.exception("loading models failed; /v2/health/ready stays 503")
            return
        _freeze()
        self.ready = True

    async def stop(self) -> None:
        await asyncio.gather(*(s.batcher.stop() for s in self.slots.values() if s.batcher is not None))

    def slot(self, name: str) -> Slot:
        if not self.ready:
            raise ServeError(
                503, "not_ready", "the models are still loading; poll /v2/health/ready", {"Retry-After": "1"}
            )
        if name not in self.slots:
            raise ServeError(404, "model_not_found", f"no model {name!r}; this server serves {sorted(self.slots)}")
        return self.slots[name]

    def cost_of(self, model: str, batch: int) -> float:
        slot = self.slots.get(model)
        return 0.0 if slot is None else slot.cost * batch

    async def call(self, slot: Slot, work: Callable[[Slot], Awaitable[Any]]) -> tuple[Any, Slot]:
        """``work(slot)`` on the primary, or on its fallback when the primary cannot answer."""
        breaker = slot.breaker
        if breaker is not None and not breaker.allow():
            self.metrics.breaker_state(slot.name, breaker.state)
            return await self._fallback(
                slot,
                work,
                ServeError(
                    503,
                    "breaker_open",
                    f"model {slot.name!r} is failing; its circuit breaker is open",
                    {"Retry-After": "1"},
                ),
            )
        start = time.monotonic()
        try:
            result = await work(slot)
        except ServeError as exc:
            if exc.status >= 500 and breaker is not None and exc.code != "queue_full":
                breaker.record(False, time.monotonic() - start)
            if exc.code in FALLBACK_CODES:
                return await self._fallback(slot, work, exc)
            raise
        finally:
            if breaker is not None:
                self.metrics.breaker_state(slot.name, breaker.state)
        if breaker is not None:
            breaker.record(True, time.monotonic() - start)
        return result, slot

    async def _fallback(self, slot: Slot, work, error: ServeError) -> tuple[Any, Slot]:
        name = slot.settings.fallback
        if name is None:
            raise error
        log.warning("model %s: %s; answering with fallback %s", slot.name, error.code, name)
        self.metrics.fallbacks.labels(slot.name, name).inc()
        backup = self.slots[name]
        return await work(backup), backup

    async def reload(self, name: str) -> int:
        """Load the slot's directory again as the next version, warm it, then swap it in."""
        slot = self.slot(name)
        async with slot.reloading:
            version = slot.model.version + 1
            try:
                model = await asyncio.to_thread(_load, name, self.settings.models[name], version, slot.settings)
            except PaddlectlError as exc:
                raise ServeError(409, "reload_failed", f"{name!r} keeps serving version {version - 1}: {exc}") from None
            if model.inputs != slot.model.inputs:
                raise ServeError(
                    409,
                    "incompatible_version",
                    f"the new version of {name!r} takes inputs {model.inputs}, the served one {slot.model.inputs}; "
                    "serve it under a new name",
                )
            slot.model, slot.check = model, _check(name, model.task, slot.settings)
            slot.cost = cost_per_item(slot.settings.cost, model.throughput)
            self.metrics.version.labels(name).set(version)
            _freeze()
            log.info("model %s reloaded as version %d", name, version)
            return version


def _freeze() -> None:
    """Move every object alive now (the loaded models': ~160k for LeNet) out of the collector's
    reach: a full collection walked them all, ~160-220 ms in the middle of some request. Unfrozen
    and collected first, so a replaced version's cycles are freed rather than kept for good."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def _breaker(name: str, settings: ModelSettings):
    if settings.breaker is None:
        return None
    from .breaker import CircuitBreaker

    try:
        return CircuitBreaker(**settings.breaker)
    except TypeError as exc:
        raise ServeConfigError(f"models.{name}.breaker: {exc}") from None


def _check(name: str, task, settings: ModelSettings):
    if settings.checks is None:
        return None
    if task is None:
        raise ServeConfigError(f"models.{name}.checks: the model has no task, so it gives no records to check")
    from .checks import OutputCheck

    return OutputCheck(task.name, settings.checks)


def preflight(settings: ServeSettings) -> None:
    """Refuse, before the server listens, what loading would refuse later: an unreadable export, a
    missing task provider, and breaker, check and cost settings their classes reject."""
    from paddlectl.eval_harness.cost import cost_model
    from paddlectl.framework.errors import ConfigError

    for name, path in settings.models.items():
        model_settings = settings.model(name)
        _, task = open_export(path)
        _breaker(name, model_settings)
        _check(name, task, model_settings)
        if model_settings.cost:
            try:
                cost_model(model_settings.cost)
            except ConfigError as exc:
                raise ServeConfigError(f"models.{name}.cost: {exc}") from None
