"""The predictor's thread cap: ``Config.set_cpu_math_library_num_threads(n)`` bounds both the Numba
kernels' pool and the BLAS (NumPy's matmul) while a predictor runs, restoring both afterwards.

While other processes keep cores busy, a run takes fewer threads (see ``kernels.cores``).
Numba's count is per Python thread, so it is set and restored around each run (only written when
it differs); the BLAS count is one per process, see ``kernels.blas``.

Under Numba's ``workqueue`` threading layer (the fallback when OpenMP and TBB are missing, see
``kernels``) parallel kernels run from two threads at once abort the process, so runs take turns
there; under OpenMP or TBB they run concurrently.
"""

from __future__ import annotations

import contextlib
import threading

import numba

from ..kernels import background, layer_is_thread_safe, set_serial
from ..kernels.blas import BLAS_CAP
from ..kernels.cores import free_cores, physical_cores

_WORKQUEUE_LOCK = threading.RLock()  # re-entrant: a run may call another predictor

SMALL_MODEL_BYTES = 1 << 20
"""Below this much weight a model runs on one thread by default: its kernels are too small to gain
from a second core (they stay serial below ``kernels.PARALLEL_MIN_SIZE``) and a one-thread run skips
the pool's bookkeeping and keeps the one-thread passes (``fuse_fc``)."""


def default_threads(weights: dict) -> int:
    """The thread count a predictor uses when the config sets none, as onnxruntime uses the physical
    cores: all of them for a model with at least ``SMALL_MODEL_BYTES`` of weights, else one."""
    return physical_cores() if sum(w.nbytes for w in weights.values()) >= SMALL_MODEL_BYTES else 1


def call_limited(n: int, fn, *args):
    """``fn(*args)`` with at most ``n`` Numba and BLAS threads (Numba's at most its pool size), and
    no more than the cores other processes leave free (``kernels.cores``)."""
    if n > 1:
        n = min(n, free_cores())
    n_numba = min(n, numba.config.NUMBA_NUM_THREADS)
    # One thread means serial kernels, which never ask Numba's pool: its count is left alone then
    # (setting and restoring it costs 3 us, a twentieth of a small model's run).
    previous = n_numba if n_numba == 1 else numba.get_num_threads()
    # serial kernels never use Numba's pool, so only parallel runs take turns under workqueue (and
    # before the first parallel kernel the layer is unknown: a one-thread run must not wait then)
    with contextlib.nullcontext() if n_numba == 1 or layer_is_thread_safe() else _WORKQUEUE_LOCK:
        if previous != n_numba:
            numba.set_num_threads(n_numba)
        BLAS_CAP.enter(n)
        serial = set_serial(True) if n_numba == 1 else None  # no context managers: a run of a small
        inference = background.set_inference(True)  # model is tens of microseconds, and each
        try:  # generator-based one costs about one
            return fn(*args)
        finally:
            background.set_inference(inference)
            if serial is not None:
                set_serial(serial)
            BLAS_CAP.exit()
            if previous != n_numba:
                numba.set_num_threads(previous)
