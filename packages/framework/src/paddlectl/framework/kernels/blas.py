"""NumPy's BLAS thread count, capped while a region runs (threadpoolctl reaches OpenBLAS/MKL/BLIS).

The count is one per process: the first of overlapping capped regions sets it and the last
restores it; it is only written when it differs, so a region whose cap already holds pays two
reads. Predictors cap it to ``Config.set_cpu_math_library_num_threads``. (Capping a recurrent
layer's time loop to one thread was measured slower: LSTM step 5.2 against 4.2 ms.)
"""

from __future__ import annotations

import sys
import threading

_FOUND: list = [-1, ()]  # (len(sys.modules) when the libraries were looked up, their controllers)


def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of the BLAS libraries loaded now (NumPy's, SciPy's, ...): looked
    up again only after an import, which is what can load another one."""
    if _FOUND[0] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        _FOUND[:] = [len(sys.modules), tuple(ThreadpoolController().select(user_api="blas").lib_controllers)]
    return _FOUND[1]


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


BLAS_CAP = BlasCap()
