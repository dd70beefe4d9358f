"""Numba kernels: pure functions over arrays, compiled once and cached on disk (``cache=True``).

Parallel kernels prefer Numba's OpenMP threading layer with passive waiting: spinning OpenMP
workers fight OpenBLAS's threads for the cores between a kernel and the GEMM after it (measured up
to 10x slower convolutions on two cores), and passive waiting removes that while keeping the layer
thread-safe, so predictors and eager code may run from several Python threads. Where OpenMP is
missing Numba falls back to TBB, then to ``workqueue`` (not thread-safe: see
``layer_is_thread_safe``). ``NUMBA_THREADING_LAYER`` / ``OMP_WAIT_POLICY`` set by the user win.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402 - the OpenMP runtime reads OMP_WAIT_POLICY when it loads

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "default"
    numba.config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]


def layer_is_thread_safe() -> bool:
    """Whether parallel kernels may run from two Python threads at once (not under workqueue)."""
    try:
        return numba.threading_layer() in ("omp", "tbb")
    except ValueError:  # no parallel kernel has run yet, so the layer is not chosen yet
        return str(numba.config.THREADING_LAYER) in ("omp", "tbb", "safe", "threadsafe")
