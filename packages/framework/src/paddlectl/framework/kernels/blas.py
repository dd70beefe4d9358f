"""NumPy's BLAS thread count, capped while a region runs (threadpoolctl finds OpenBLAS/MKL/BLIS).

The count is one per process: the first of overlapping capped regions sets it and the last
restores it; it is only written when it differs, so a region whose cap already holds pays two
reads. Predictors cap it to ``Config.set_cpu_math_library_num_threads``; ``matmul`` caps a small
GEMM to one thread (``ops.linalg.SMALL_GEMM_MACS``). (Capping a recurrent
layer's time loop to one thread was measured slower: LSTM step 5.2 against 4.2 ms.)

A pthreads OpenBLAS is set through its own functions: threadpoolctl (from 3.8) lets only the
first Python thread that set its count set it again and silently ignores the others, so a
predictor run from a worker thread would go uncapped; the regions here coordinate threads
themselves. Called directly, the read and two writes of a capped region take 0.6 us, not 1.9 us.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import threading

_FOUND: list = [-1, ()]  # (len(sys.modules) when the libraries were looked up, their controllers)


def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of the BLAS libraries loaded now (NumPy's, SciPy's, ...): looked
    up again only after an import, which is what can load another one."""
    if _FOUND[0] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        libraries = ThreadpoolController().select(user_api="blas").lib_controllers
        _FOUND[:] = [len(sys.modules), tuple(_count_functions(lib) for lib in libraries)]
    return _FOUND[1]


def _count_functions(lib) -> tuple:
    """(get, set) of one library's thread count: OpenBLAS's own where it runs its own threads."""
    if lib.internal_api == "openblas" and lib.threading_layer == "pthreads":
        dll = ctypes.CDLL(lib.filepath)
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_")):
            get = getattr(dll, f"{prefix}openblas_get_num_threads{suffix}", None)
            set_ = getattr(dll, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                set_.argtypes = [ctypes.c_int]
                return get, set_
    return lib.get_num_threads, lib.set_num_threads


class BlasCap:
    """The process-wide BLAS thread count while any capped region runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active = 0
        self._restore: list[tuple] = []

    def enter(self, n: int) -> None:
        with self._lock:
            self._active += 1
            if self._active == 1:
                self._restore = []
                for get, set_ in _blas_libraries():
                    current = get()
                    if current != n:
                        set_(n)
                        self._restore.append((set_, current))

    def exit(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                for set_, count in self._restore:
                    set_(count)
                self._restore = []


BLAS_CAP = BlasCap()
