"""Make OpenBLAS's idle threads spin briefly, not for ~0.1 s; imported first, before NumPy.

After each GEMM, OpenBLAS's worker threads busy-wait for 2**28 cycles (its default
``OPENBLAS_THREAD_TIMEOUT``) in case another GEMM follows. Between our GEMMs, Numba kernels run
parallel regions of their own, and when the cores are shared (another process, DataLoader
workers) a spinning BLAS thread holds the core a Numba worker needs. Measured on 2 cores with one
other busy process: PP-OCRv4 recognition 216 ms at 28, 150 ms at 16; LeNet training step 9.8 ms
at 28, 5.5 ms at 16 (with several busy processes: 800 vs 130 ms, 180 vs 6 ms). On an idle machine
16 costs nothing against 28, while 1 (sleep at once) makes every small GEMM wake a thread (LSTM
4.6 -> 6.4 ms). OpenBLAS reads the variable once, when NumPy loads it, so it is set here only if
NumPy is not loaded yet (and the user has not set it); otherwise ``kernels.blas_threads_spin``
notices and parallel kernels step aside.
"""

import os
import sys

SPIN_LOG2_CYCLES = 16
"""About 20 us of spinning at 3 GHz: covers back-to-back GEMMs, not the kernels between them."""
NUMPY_LOADED_FIRST = "numpy" in sys.modules
if not NUMPY_LOADED_FIRST:
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", str(SPIN_LOG2_CYCLES))
