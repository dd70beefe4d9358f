"""How many cores are ours to use: the machine's physical cores, minus those other processes keep
busy right now.

A parallel region (a Numba kernel's or OpenBLAS's GEMM) splits its work evenly and waits for its
slowest thread. When another process keeps a core busy, one of our threads waits for the scheduler
every region: measured on 2 cores with one spinning neighbour, PP-OCRv4 det ran 81 ms on one thread
and 369 ms on two. So a predictor run takes no more threads than the cores left free
(``inference.threads.call_limited``). Eager code (training) may not change its thread count: a
different count sums in a different order (OpenBLAS's GEMMs and parallel reductions alike), and a
training run must not depend on the machine's load (a resumed run repeats the interrupted one
exactly). Its GEMMs adapt without that: ``kernels.blas.matmul`` cuts a product into fixed parts and
only runs them at once while cores are free.

The reading is the kernel's count of runnable tasks (``/proc/loadavg``) less this process's own
running threads, taken at most every ``INTERVAL_S`` (~20 us a reading, so well under 0.1% of the
time). It counts tasks on every CPU, so it is used only where this process may run on all of them
(not in a cpuset that pins it to a few CPUs of a bigger host); elsewhere, and where ``/proc`` is
missing, nothing backs off.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

INTERVAL_S = 0.05
"""How long one reading holds: a neighbour's load changes on this scale, our kernels much faster."""


@functools.cache
def physical_cores() -> int:
    """The physical cores this process may run on (hyper-threads of one core count once)."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in allowed:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as handle:
                cores.add(handle.read().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


def _machine_wide() -> bool:
    """Whether /proc/loadavg describes the CPUs this process runs on (it counts all of them)."""
    return hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) == os.cpu_count()


def _own_running() -> int:
    """This process's threads running or runnable now."""
    own = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as handle:
                own += handle.read().rsplit(b")", 1)[1].split()[0] == b"R"
        except OSError:  # the thread ended while we looked
            pass
    return own


def _busy_elsewhere() -> int:
    """Tasks running or runnable now that are not this process's threads. Ours are counted before and
    after the machine's count and the larger taken: a worker that stops spinning between the two
    reads would otherwise pass for another process (in LeNet training steps, a third of the readings:
    its convolutions and GEMMs then ran on one thread for the next ``INTERVAL_S``)."""
    before = _own_running()
    running = _machine_running()
    return max(0, running - max(before, _own_running()))


def _machine_running() -> int:
    """Tasks running or runnable now on the whole machine (the kernel's count in /proc/loadavg)."""
    with open("/proc/loadavg", "rb") as handle:
        return int(handle.read().split()[3].split(b"/")[0])


class _FreeCores:
    """The latest reading, refreshed at most every ``INTERVAL_S``."""

    def __init__(self) -> None:
        self._read_at = -INTERVAL_S
        self._free = physical_cores()
        self._enabled = _machine_wide() and os.path.exists("/proc/loadavg")

    def __call__(self) -> int:
        now = time.monotonic()
        if self._enabled and now - self._read_at >= INTERVAL_S:
            self._read_at = now
            try:
                self._free = max(1, physical_cores() - _busy_elsewhere())
            except (OSError, ValueError, IndexError):
                self._enabled = False
        return self._free


free_cores = _FreeCores()
"""``free_cores()``: physical cores no other process is using now (at least 1)."""


_HELPERS: list = []  # the pool, started at its first use
if hasattr(os, "register_at_fork"):  # a forked child (a DataLoader worker) has none of its parent's threads
    os.register_at_fork(after_in_child=_HELPERS.clear)
_HELPERS_LOCK = threading.Lock()


def helper_pool() -> ThreadPoolExecutor:
    """The process's helper threads (one fewer than the physical cores; the caller runs a part too):
    ``kernels.blas.matmul``'s GEMM parts and ``inference.batch_split``'s batch parts."""
    with _HELPERS_LOCK:
        if not _HELPERS:
            _HELPERS.append(ThreadPoolExecutor(max(1, physical_cores() - 1), thread_name_prefix="paddlectl-helper"))
        return _HELPERS[0]
