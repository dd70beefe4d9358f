"""Numba kernels: pure functions over arrays, compiled once and cached on disk (``cache=True``).

Parallel kernels use Numba's ``workqueue`` threading layer unless ``NUMBA_THREADING_LAYER`` says
otherwise: the OpenMP layer's spinning worker threads fight OpenBLAS's threads for the cores
between a kernel and the GEMM after it, which made im2col + GEMM convolutions up to 10x slower on
two cores. (workqueue must not run parallel kernels from several threads at once; DataLoader
workers are processes, so they do not.)
"""

import os

import numba

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
