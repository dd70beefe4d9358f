"""The batcher on its own (no server): how requests group into batches while a worker is busy."""

import asyncio
import threading
import time

import numpy as np

from paddlectl.serving.batcher import Batcher
from paddlectl.serving.settings import ModelSettings


class SlowModel:
    """Echoes its input after ``seconds``; records each batch's row count."""

    batchable = True

    def __init__(self, seconds: float) -> None:
        self.seconds, self.batches, self.lock = seconds, [], threading.Lock()

    def run(self, arrays):
        with self.lock:
            self.batches.append(len(arrays[0]))
        time.sleep(self.seconds)
        return [arrays[0] * 2]


async def _serve(model: SlowModel, settings: ModelSettings, arrivals: list[float]) -> list[np.ndarray]:
    batcher = Batcher("m", lambda: model, settings, lambda metric, value: None)
    batcher.start()

    async def one(i: int, after: float):
        await asyncio.sleep(after)
        (out,), _ = await batcher.submit([np.full((1, 2), i, np.float32)], 1, time.monotonic() + 10)
        return out

    try:
        return await asyncio.gather(*(one(i, t) for i, t in enumerate(arrivals)))
    finally:
        await batcher.stop()


def test_requests_arriving_while_the_worker_is_busy_run_as_one_batch():
    model = SlowModel(0.3)
    settings = ModelSettings(max_batch_size=8, max_delay_ms=0)
    # one request starts the worker; five more arrive while it runs, each after the last has queued
    outputs = asyncio.run(_serve(model, settings, [0.0, 0.05, 0.06, 0.07, 0.08, 0.09]))
    assert model.batches == [1, 5]
    assert [float(o[0, 0]) for o in outputs] == [2.0 * i for i in range(6)]


def test_a_batch_never_exceeds_max_batch_size():
    model = SlowModel(0.2)
    settings = ModelSettings(max_batch_size=3, max_delay_ms=0)
    asyncio.run(_serve(model, settings, [0.0] + [0.05] * 7))
    assert model.batches[0] == 1 and max(model.batches) == 3 and sum(model.batches) == 8


def test_the_batch_window_counts_from_the_oldest_request_so_queued_requests_wait_it_once():
    model = SlowModel(0.3)
    settings = ModelSettings(max_batch_size=8, max_delay_ms=200)
    # The first waits out its 200 ms window alone and runs 0.2-0.5 s. The second queues at 0.3 s, so
    # its window has passed when the worker frees at 0.5 s: it runs at once, alone. (Counted from the
    # free worker, its window would stay open to 0.7 s and the third, queued at 0.6 s, would join it.)
    asyncio.run(_serve(model, settings, [0.0, 0.3, 0.6]))
    assert model.batches == [1, 1, 1]
