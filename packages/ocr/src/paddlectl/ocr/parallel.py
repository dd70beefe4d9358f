"""Pages in parallel: one image per core at a time, each through its own clone of the chain.

A PP-OCR chain is many small steps (a detector, a sorted crop list, batches of lines), and a second
core gains little inside one image: onnxruntime's two threads run PP-OCRv4 det 1.9x faster, ours
1.1-1.4x. Across images there is nothing to share, so a stream of pages runs best as ``workers``
threads, each running one image at a time on one-thread predictors (the framework's kernels release
the GIL). Each thread has its own clone of the chain (own handles; the models and weights are shared);
results come back in input order and equal a one-at-a-time run's exactly (each image's arithmetic is
the same one-thread arithmetic).
"""

from __future__ import annotations

import collections
import queue
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from paddlectl.framework.kernels.cores import physical_cores

Item = TypeVar("Item")
Result = TypeVar("Result")

MAX_DEFAULT_WORKERS = 4
"""The default's cap: each worker holds its own activations (a 736x736 detector input's are tens of
MB per layer), so a many-core machine does not multiply the memory unasked; ``OCRSettings.workers``
sets any count."""

IN_FLIGHT_PER_WORKER = 2
"""Items submitted ahead per worker: enough that a worker never waits for the next image, few
enough that a long stream is not read into memory at once."""


def default_workers() -> int:
    """One image at a time per physical core, at most ``MAX_DEFAULT_WORKERS`` (a busy neighbour only
    slows a worker down: unlike a parallel region, no worker waits for another)."""
    return min(physical_cores(), MAX_DEFAULT_WORKERS)


def map_ordered(system, fn: Callable[[object, Item], Result], items: Iterable[Item], workers: int) -> Iterator[Result]:
    """``fn(chain, item)`` for each item, in order, on ``workers`` threads, each call given a chain of
    its own (``system`` or one of its clones). An error in one call is raised at its place in the order,
    and the calls not yet started are cancelled."""
    if workers <= 1:
        for item in items:
            yield fn(system, item)
        return
    idle: queue.SimpleQueue = queue.SimpleQueue()
    for chain in [system, *(system.clone() for _ in range(workers - 1))]:
        idle.put(chain)

    def call(item):
        chain = idle.get()
        try:
            return fn(chain, item)
        finally:
            idle.put(chain)

    pool = ThreadPoolExecutor(workers, thread_name_prefix="paddlectl-ocr")
    pending: collections.deque = collections.deque()
    try:
        for item in items:
            pending.append(pool.submit(call, item))
            if len(pending) >= IN_FLIGHT_PER_WORKER * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
