"""The predictor's thread cap: ``Config.set_cpu_math_library_num_threads(n)`` bounds both the Numba
kernels' pool and the BLAS (NumPy's matmul) while a predictor runs, restoring both afterwards.

Numba's count is per Python thread, so it is set and restored around each run. The BLAS count
is one per process (``threadpoolctl`` reaches OpenBLAS/MKL/BLIS): the first of overlapping runs
sets it and the last restores it. Each is only written when it differs, so a run whose caps
already hold pays two reads.

Under Numba's ``workqueue`` threading layer (the fallback when OpenMP and TBB are missing, see
``kernels``) parallel kernels run from two threads at once abort the process, so runs take turns
there; under OpenMP or TBB they run concurrently.
"""

from __future__ import annotations

import contextlib
import functools
import threading

import numba

from ..kernels import layer_is_thread_safe, serial_kernels

_WORKQUEUE_LOCK = threading.Lock()


@functools.cache
def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of the BLAS libraries loaded now (NumPy's among them), found once."""
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


class _BlasCap:
    """The process-wide BLAS thread count while any predictor runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._restore: list[tuple] = []

    def enter(self, n: int) -> None:
        with self._lock:
            self._active += 1
            if self._active == 1:
                self._restore = []
                for lib in _blas_libraries():
                    current = lib.get_num_threads()
                    if current != n:
                        lib.set_num_threads(n)
                        self._restore.append((lib, current))

    def exit(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                for lib, count in self._restore:
                    lib.set_num_threads(count)
                self._restore = []


_BLAS = _BlasCap()


def call_limited(n: int, fn, *args):
    """``fn(*args)`` with at most ``n`` Numba and BLAS threads (Numba's at most its pool size)."""
    n_numba = min(n, numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    with contextlib.nullcontext() if layer_is_thread_safe() else _WORKQUEUE_LOCK:
        if previous != n_numba:
            numba.set_num_threads(n_numba)
        _BLAS.enter(n)
        try:
            with serial_kernels() if n_numba == 1 else contextlib.nullcontext():
                return fn(*args)
        finally:
            _BLAS.exit()
            if previous != n_numba:
                numba.set_num_threads(previous)
