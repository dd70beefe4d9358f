"""What runs inside a DataLoader worker process: fetch, collate, ship back; and the main process's fetch.

Batches are pickled in the worker itself, so an unpicklable batch is reported as that batch's
error instead of being lost in a queue's feeder thread. Workers ignore SIGINT (the main process
handles Ctrl-C and shuts them down) and exit on their own if the main process disappears.
"""

from __future__ import annotations

import itertools
import os
import pickle
import queue
import random
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ..ops.random import seed as paddle_seed
from .collate import default_collate_fn, to_arrays
from .dataset import TensorDataset

__all__ = ["WorkerInfo", "get_worker_info"]

END = "paddlectl.io.iterable-dataset-exhausted"


@dataclass(frozen=True)
class WorkerInfo:
    """Inside a worker: its id, how many workers there are, its copy of the dataset and its seed."""

    id: int
    num_workers: int
    dataset: object
    seed: int


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's WorkerInfo, or None in the main process (use it to shard an IterableDataset)."""
    return _worker_info


class Fetcher:
    """Fetches one batch: by indices from a map-style dataset, or the next items of an iterable one."""

    def __init__(self, dataset, iterable: bool, auto_collate: bool, collate_fn, batch_size, drop_last: bool):
        self.dataset = dataset
        self.iterable = iterable
        self.auto_collate = auto_collate
        self.collate_fn = collate_fn
        self.batch_size = batch_size
        self.drop_last = drop_last
        self._iterator = None
        # a TensorDataset whose rows are its tensors' rows, collated the default way: fetched by index arrays
        self._batched = (
            collate_fn is default_collate_fn
            and isinstance(dataset, TensorDataset)
            and type(dataset).__getitem__ is TensorDataset.__getitem__
        )

    def reset(self) -> None:
        self._iterator = None

    def fetch(self, indices):
        """A batch; raises StopIteration when an iterable dataset has no (full, if drop_last) batch left."""
        if not self.iterable:
            if self.auto_collate and self._batched:
                return self.dataset._batch(indices)
            if self.auto_collate:
                return self.collate_fn([self.dataset[i] for i in indices])
            return self.collate_fn(self.dataset[indices])
        if self._iterator is None:
            self._iterator = iter(self.dataset)
        if not self.auto_collate:
            return self.collate_fn(next(self._iterator))
        samples = list(itertools.islice(self._iterator, self.batch_size))
        if not samples or (self.drop_last and len(samples) < self.batch_size):
            raise StopIteration
        return self.collate_fn(samples)


@dataclass
class WorkerError:
    """An exception raised in a worker, carried back with its traceback text."""

    worker_id: int
    type_name: str
    exc_type: type | None
    text: str

    def reraise(self):
        message = (
            f"Caught {self.type_name} in DataLoader worker process {self.worker_id}.\n"
            f"Original Traceback (most recent call last) in the worker:\n{self.text}"
        )
        try:
            error = self.exc_type(message) if self.exc_type is not None else RuntimeError(message)
        except Exception:  # noqa: BLE001 - an exception type we cannot build from a message
            error = RuntimeError(message)
        raise error from None


def _error(worker_id: int, exc: BaseException) -> WorkerError:
    exc_type = type(exc)
    try:
        pickle.dumps(exc_type)
    except Exception:  # noqa: BLE001 - e.g. a class defined inside a function: send the name only
        exc_type = None
    return WorkerError(worker_id, type(exc).__name__, exc_type, traceback.format_exc())


def seed_worker(seed: int) -> None:
    """Seed every random stream a dataset may use in this worker (Python, NumPy, paddle)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    paddle_seed(seed)


def worker_loop(fetcher: Fetcher, index_queue, result_queue, worker_id, num_workers, seed, init_fn, parent_pid):
    """Serve (epoch, idx, indices) requests until told to stop (None) or the parent is gone."""
    global _worker_info
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    seed_worker(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, fetcher.dataset, seed)
    init_error = None
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception as exc:  # noqa: BLE001 - reported to the main process with every request
            init_error = _error(worker_id, exc)
    epoch = None
    while True:
        try:
            request = index_queue.get(timeout=1.0)
        except queue.Empty:
            if os.getppid() != parent_pid:
                break
            continue
        if request is None:
            break
        req_epoch, idx, indices = request
        if req_epoch != epoch:
            epoch = req_epoch
            fetcher.reset()
        try:
            if init_error is not None:
                payload = init_error
            else:
                try:
                    payload = bytes(ForkingPickler.dumps(to_arrays(fetcher.fetch(indices))))
                except StopIteration:
                    payload = END
        except Exception as exc:  # noqa: BLE001 - any dataset/collate error goes back to the main process
            payload = _error(worker_id, exc)
        result_queue.put((req_epoch, idx, worker_id, payload))
    result_queue.cancel_join_thread()  # shutting down: results nobody will read may be dropped
