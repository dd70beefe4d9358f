"""``paddle.io.DataLoader``: batches from a dataset, in the main process or in prefetching worker processes."""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing
import os
import queue
import signal
import time

from ..errors import ConfigError
from ..ops.random import generator
from .collate import default_collate_fn, default_convert_fn, to_tensors
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequenceSampler
from .worker import END, Fetcher, WorkerError, worker_loop

__all__ = ["DataLoader"]

_POLL_S = 0.5  # how often a waiting main process checks that its workers are alive


class DataLoader:
    """Iterate over ``dataset`` in batches (Paddle's signature and defaults).

    ``num_workers > 0`` starts that many worker processes (fork where the platform has it) that
    fetch and collate ``prefetch_factor`` batches each ahead of the training loop. Shuffling and
    worker seeds come from ``paddle.seed``'s generator, so a seeded run repeats exactly. Batches
    come back as Tensors inside the structure ``collate_fn`` built (``places`` is accepted; with a
    static-mode ``feed_list`` and ``return_list=False`` each batch is ``[{feed name: field}]``).
    """

    def __init__(
        self,
        dataset,
        feed_list=None,
        places=None,
        return_list: bool = True,
        batch_sampler=None,
        batch_size: int | None = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        collate_fn=None,
        num_workers: int = 0,
        use_buffer_reader: bool = True,
        reader_buffer_size: int = 2,
        prefetch_factor: int = 2,
        use_shared_memory: bool = True,
        timeout: float = 0,
        worker_init_fn=None,
        persistent_workers: bool = False,
    ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers should be a non-negative integer, got {num_workers!r}")
        if not isinstance(prefetch_factor, int) or prefetch_factor <= 0:
            raise ValueError(f"DataLoader: prefetch_factor should be a positive integer, got {prefetch_factor!r}")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout should be a non-negative value, got {timeout!r}")
        self.dataset = dataset
        self.feed_list = feed_list
        self.places = places
        self.return_list = return_list
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers and num_workers > 0
        self.use_shared_memory = use_shared_memory and num_workers > 0
        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable and shuffle:
            raise ValueError(f"IterableDataset not support shuffle, but got shuffle={shuffle}")
        if self.iterable and batch_sampler is not None:
            raise ValueError("IterableDataset expect unspecified batch_sampler")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise ValueError("batch_size/shuffle/drop_last should not be set when batch_sampler is given")
            self.batch_sampler, self.batch_size = batch_sampler, None
        elif batch_size is None:
            self.batch_sampler, self.batch_size = None, None
        else:
            if not isinstance(batch_size, int) or batch_size <= 0:
                raise ValueError(f"batch_size should be None or a positive integer, got {batch_size!r}")
            self.batch_size = batch_size
            self.batch_sampler = (
                None
                if self.iterable
                else BatchSampler(dataset=dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last)
            )
        self.auto_collate = batch_sampler is not None or batch_size is not None
        self.collate_fn = collate_fn or (default_collate_fn if self.auto_collate else default_convert_fn)
        self.drop_last = drop_last
        self._sampler = (
            None
            if self.auto_collate or self.iterable
            else (RandomSampler(dataset) if shuffle else SequenceSampler(dataset))
        )
        self._pool = None
        self._epoch = 0

    def _fetcher(self) -> Fetcher:
        return Fetcher(self.dataset, self.iterable, self.auto_collate, self.collate_fn, self.batch_size, self.drop_last)

    def _index_stream(self):
        """What each fetch request carries: a batch's indices, one index, or nothing (iterable datasets)."""
        if self.iterable:
            return itertools.repeat(None)
        return iter(self.batch_sampler if self.auto_collate else self._sampler)

    def __len__(self) -> int:
        if self.iterable:
            raise TypeError("DataLoader over an IterableDataset has no length")
        return len(self.batch_sampler if self.auto_collate else self._sampler)

    def __iter__(self):
        if self.feed_list is not None and not self.return_list:
            return self._feeds(self._batches())
        return self._batches()

    def _batches(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self._epoch += 1
        if self._pool is None or self._pool.closed:
            self._pool = _WorkerPool(self)
        pool, self._pool = self._pool, (self._pool if self.persistent_workers else None)
        return _MultiProcessIter(self, pool, self._epoch)

    def _feeds(self, batches):
        """Static mode's form (``feed_list`` given, ``return_list=False``): each batch as
        ``[{feed name: field}]``, one dict per place, which ``Executor.run(feed=...)`` takes."""
        names = [v.name for v in self.feed_list]
        for batch in batches:
            fields = list(batch) if isinstance(batch, list | tuple) else [batch]
            if len(fields) != len(names):
                raise ConfigError(f"DataLoader: a batch has {len(fields)} fields for the feed_list {names}")
            yield [dict(zip(names, fields, strict=True))]

    __call__ = __iter__

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown()


def _derived_seed() -> int:
    """A seed fixed by ``paddle.seed``'s generator state that does not advance it.

    Not drawing from the stream keeps shuffling identical whatever ``num_workers`` is.
    """
    state = repr(generator().bit_generator.state).encode()
    return int.from_bytes(hashlib.sha256(state).digest()[:8], "little") >> 2


class _SingleProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self._fetcher = loader._fetcher()
        self._indices = loader._index_stream()

    def __iter__(self):
        return self

    def __next__(self):
        return to_tensors(self._fetcher.fetch(next(self._indices)))


class _WorkerPool:
    """The worker processes, their request queues and the shared result queue."""

    def __init__(self, loader: DataLoader) -> None:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        base_seed = _derived_seed()
        self.result_queue = ctx.Queue()
        self.index_queues = []
        self.workers = []
        self.closed = False
        for worker_id in range(loader.num_workers):
            index_queue = ctx.Queue()
            process = ctx.Process(
                target=worker_loop,
                args=(
                    loader._fetcher(),
                    index_queue,
                    self.result_queue,
                    worker_id,
                    loader.num_workers,
                    base_seed + worker_id,
                    loader.worker_init_fn,
                    os.getpid(),
                ),
                daemon=True,
            )
            process.start()
            self.index_queues.append(index_queue)
            self.workers.append(process)

    def check_alive(self) -> None:
        for worker_id, process in enumerate(self.workers):
            if process.exitcode is not None:
                code = process.exitcode
                how = f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
                raise RuntimeError(
                    f"DataLoader worker {worker_id} (pid {process.pid}) exited unexpectedly ({how}); "
                    "if it was killed for memory, lower batch_size, prefetch_factor or num_workers"
                )

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        for index_queue in self.index_queues:
            index_queue.put(None)
        for process in self.workers:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
        for q in (*self.index_queues, self.result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        self.shutdown()


class _MultiProcessIter:
    """One epoch over a worker pool: keeps requests in flight, returns batches in request order."""

    def __init__(self, loader: DataLoader, pool: _WorkerPool, epoch: int) -> None:
        self._pool = pool
        self._epoch = epoch
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        self._indices = loader._index_stream()
        self._active = list(range(loader.num_workers))  # workers whose iterable dataset is not exhausted
        self._turn = 0
        self._sent = 0
        self._received = 0
        self._ready = {}
        self._done = False
        for _ in range(loader.prefetch_factor * loader.num_workers):
            self._request()

    def _request(self) -> None:
        if not self._active:
            return
        indices = next(self._indices, END)
        if indices is END:
            self._active = []
            return
        worker_id = self._active[self._turn % len(self._active)]
        self._turn += 1
        self._pool.index_queues[worker_id].put((self._epoch, self._sent, indices))
        self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        try:
            return self._next_batch()
        except StopIteration:
            self._finish()
            raise
        except BaseException:  # errors, worker deaths and KeyboardInterrupt all stop the workers
            self._finish(force=True)
            raise

    def _next_batch(self):
        while True:
            if self._received == self._sent:
                self._request()
                if self._received == self._sent:
                    raise StopIteration
            if self._received not in self._ready:
                epoch, idx, worker_id, payload = self._get()
                if epoch == self._epoch:
                    self._ready[idx] = (worker_id, payload)
                continue
            worker_id, payload = self._ready.pop(self._received)
            self._received += 1
            if isinstance(payload, WorkerError):
                payload.reraise()
            if isinstance(payload, str) and payload == END:
                if worker_id in self._active:
                    self._active.remove(worker_id)
                continue
            self._request()
            return to_tensors(multiprocessing.reduction.ForkingPickler.loads(payload))

    def _get(self):
        deadline = time.monotonic() + self._timeout if self._timeout else None
        while True:
            try:
                return self._pool.result_queue.get(timeout=_POLL_S)
            except queue.Empty:
                self._pool.check_alive()
                if deadline is not None and time.monotonic() > deadline:
                    raise RuntimeError(
                        f"DataLoader timed out: no batch from the workers in {self._timeout} s"
                    ) from None

    def _finish(self, force: bool = False) -> None:
        self._done = True
        if force or not self._persistent:
            self._pool.shutdown()

    def __del__(self) -> None:
        if not self._done and not self._persistent:
            self._pool.shutdown()
