"""Intra-op threads during measurement: BLAS/OpenMP pools (threadpoolctl) and Numba's pool.

A predictor that may use every core is measured on a machine shared with other jobs: with two
threads on two busy cores, every BLAS call or parallel kernel waits for a descheduled worker
and latency turns bimodal (x8 on a 2-core CI box). Serving deployments pin their threads;
``Eval.harness.threads`` pins them the same way so the numbers describe the deployment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba
from threadpoolctl import threadpool_limits

ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@contextlib.contextmanager
def limit_threads(threads: int | None) -> Iterator[None]:
    """Pin BLAS, OpenMP and Numba to ``threads`` inside the block (no change when None)."""
    if threads is None:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        with threadpool_limits(limits=threads):
            yield
    finally:
        numba.set_num_threads(previous)


def child_env(threads: int | None) -> dict[str, str]:
    """Environment variables that pin a fresh process (the cold-start child) the same way."""
    return {} if threads is None else dict.fromkeys(ENV_VARS, str(threads))
