"""Make OpenBLAS's idle threads sleep instead of spinning; imported first, before NumPy.

After each GEMM, OpenBLAS's worker threads busy-wait for 2**28 cycles (its default
``OPENBLAS_THREAD_TIMEOUT``) in case another GEMM follows. Between our GEMMs, Numba kernels run
parallel regions of their own, and on a machine with as many cores as threads a spinning BLAS
thread holds the core a Numba worker needs: measured on 2 cores, a PP-OCRv4 recognition run took
800 ms instead of 130 ms and a LeNet training step 180 ms instead of 6 ms. OpenBLAS reads the
variable once, when NumPy loads it, so it is set here only if NumPy is not loaded yet (and the user
has not set it); otherwise ``kernels.blas_threads_spin`` notices and parallel kernels step aside.
"""

import os
import sys

NUMPY_LOADED_FIRST = "numpy" in sys.modules
if not NUMPY_LOADED_FIRST:
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "1")
