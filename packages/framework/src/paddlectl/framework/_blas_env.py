"""Make OpenBLAS's idle threads spin briefly, not for ~0.1 s, whichever of NumPy and paddlectl
was imported first.

After each GEMM, OpenBLAS's worker threads busy-wait for 2**28 cycles (its default
``OPENBLAS_THREAD_TIMEOUT``) in case another GEMM follows. Between our GEMMs, Numba kernels run
parallel regions of their own, and when the cores are shared (another process, DataLoader
workers) a spinning BLAS thread holds the core a Numba worker needs. Measured on 2 cores with one
other busy process: PP-OCRv4 recognition 216 ms at 28, 150 ms at 16; LeNet training step 9.8 ms
at 28, 5.5 ms at 16 (with several busy processes: 800 vs 130 ms, 180 vs 6 ms). On an idle machine
16 costs nothing against 28, while 1 (sleep at once) makes every small GEMM wake a thread (LSTM
4.6 -> 6.4 ms).

OpenBLAS reads the variable when it loads, so before NumPy setting it is enough. After NumPy (most
scripts import it first) the loaded OpenBLAS is told to read its environment again and its thread
pool is shut down, to be restarted with the short spin at the next threaded GEMM (OpenBLAS starts
its pool lazily; its fork handler uses the same shutdown). Where that cannot be done (an OpenBLAS
without those entry points) ``SPIN_SHORTENED`` is False and ``kernels.blas_threads_spin`` makes
parallel kernels step aside. A value the user set wins.
"""

import ctypes
import os
import sys

SPIN_LOG2_CYCLES = 16
"""About 20 us of spinning at 3 GHz: covers back-to-back GEMMs, not the kernels between them."""


def _restart_loaded_openblas() -> bool:
    """Make every threaded OpenBLAS loaded now re-read the environment and restart its pool."""
    from threadpoolctl import ThreadpoolController

    restarted = True
    for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
        if lib.threading_layer != "pthreads":
            continue
        dll = ctypes.CDLL(lib.filepath)
        read_env = getattr(dll, "openblas_read_env", None)
        shutdown = getattr(dll, "blas_thread_shutdown_", None)
        if read_env is None or shutdown is None:
            restarted = False
            continue
        read_env()
        shutdown()
    return restarted


def _shorten_spin() -> bool:
    """Whether OpenBLAS's idle threads now spin at most 2**SPIN_LOG2_CYCLES cycles."""
    chosen = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
    if chosen is not None:
        return chosen.isdigit() and int(chosen) <= SPIN_LOG2_CYCLES
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(SPIN_LOG2_CYCLES)
    return "numpy" not in sys.modules or _restart_loaded_openblas()


SPIN_SHORTENED = _shorten_spin()
