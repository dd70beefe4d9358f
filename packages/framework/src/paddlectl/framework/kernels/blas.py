"""NumPy's BLAS thread count, capped while a region runs (threadpoolctl finds OpenBLAS/MKL/BLIS),
and ``matmul``, the GEMM whose result does not depend on the machine's load.

The count is one per process: the first of overlapping capped regions sets it and the last
restores it; it is only written when it differs, so a region whose cap already holds pays two
reads. Predictors cap it to ``Config.set_cpu_math_library_num_threads``; ``matmul`` runs a GEMM on
the free cores where that keeps one thread's sums, else on one BLAS thread, split in fixed parts
where it is large (see there). (Capping a recurrent
layer's time loop to one thread was measured slower: LSTM step 5.2 against 4.2 ms.)

A pthreads OpenBLAS is set through its own functions: threadpoolctl (from 3.8) lets only the
first Python thread that set its count set it again and silently ignores the others, so a
predictor run from a worker thread would go uncapped; the regions here coordinate threads
themselves. Called directly, the read and two writes of a capped region take 0.6 us, not 1.9 us.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import sys
import threading

import numpy as np

from .cores import free_cores, helper_pool, physical_cores

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
        self._count = 1
        self._restore: list[tuple] = []

    def enter(self, n: int) -> None:
        with self._lock:
            self._active += 1
            if self._active == 1:
                self._count = n
                self._restore = []
                for get, set_ in _blas_libraries():
                    current = get()
                    if current != n:
                        set_(n)
                        self._restore.append((set_, current))

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``np.matmul(a, b)`` inside a capped region, on one BLAS thread when each product (each
        image's, in a batched one) has fewer than ``PARALLEL_GEMM_MACS`` multiply-adds and this is the
        only region: OpenBLAS's helper threads sleep between a model's GEMMs, and waking them costs
        more than a small product's half (PP-OCR cls 6x48x192 at two threads: 4.2 -> 3.8 ms)."""
        macs = a.shape[-2] * a.shape[-1] * b.shape[-1]
        with self._lock:
            narrow = self._active == 1 and self._count > 1 and macs < PARALLEL_GEMM_MACS
            if narrow:
                for _, set_ in _blas_libraries():
                    set_(1)
        try:
            return np.matmul(a, b)
        finally:
            if narrow:
                with self._lock:
                    for _, set_ in _blas_libraries():
                        set_(self._count)

    @property
    def active(self) -> bool:
        """Whether some region holds a cap now (a predictor's run, say)."""
        return self._active > 0

    def exit(self) -> None:
        with self._lock:
            self._active -= 1
            if self._active == 0:
                for set_, count in self._restore:
                    set_(count)
                self._restore = []


BLAS_CAP = BlasCap()

PARALLEL_GEMM_MACS = 1 << 22
"""Inside a model's run, products (each image's, in a batched product) with fewer multiply-adds than
this take one BLAS thread (``BlasCap.matmul``)."""


SMALL_GEMM_MACS = 1 << 24
"""Below this many multiply-adds (m k n) a GEMM is one part, on one thread: handing a part to another
thread costs ~60-130 us on this workplace's VMs (a futex wake each way), about what a second core
saves on a product of 2^22-2^24 (LeNet's [150, 16] x [16, 3360]: 202 us on two OpenBLAS threads, 265
on one, 265 split). Interleaved training steps, idle, ms: LeNet two OpenBLAS threads 6.8-9.0, one
thread 7.7-9.9, split from 2^22 7.3-10.3, from 2^24 7.9-10.3; MLP 4.9-7.0, 6.6-7.2, 4.9-6.5, 5.0-7.5."""

PART_MACS = 1 << 21
"""A split product's parts have at least this many multiply-adds (~40 us on one core), so that a
many-core machine does not cut a product into parts that cost less than handing them out."""

_pool = helper_pool  # a module name, so a test can count the parts handed out


def _whole(a: np.ndarray, b: np.ndarray, threads: int) -> np.ndarray:
    BLAS_CAP.enter(threads)
    try:
        return np.matmul(a, b)
    finally:
        BLAS_CAP.exit()


def _layout(a: np.ndarray, b: np.ndarray) -> tuple | None:
    """What decides OpenBLAS's summation order for ``a @ b``: shapes, dtypes and whether each operand
    is row- or column-major (a transposed view); None for other strides (NumPy copies those)."""
    orders = tuple("C" if x.flags.c_contiguous else "F" if x.flags.f_contiguous else None for x in (a, b))
    return None if None in orders else (a.shape, b.shape, a.dtype.str, b.dtype.str, orders)


@functools.lru_cache(maxsize=1024)
def _threads_agree(layout: tuple, threads: int) -> bool:
    """Whether NumPy's BLAS on ``threads`` threads gives products of this layout one thread's sums,
    bit for bit: checked once per layout on random operands (equal sums in another order would be a
    coincidence on thousands of random values)."""
    if threads == 1:
        return True
    (shape_a, shape_b, dtype_a, dtype_b, orders) = layout
    rng = np.random.default_rng(0)
    a, b = (
        np.asarray(rng.standard_normal(shape), dtype, order=order)
        for shape, dtype, order in ((shape_a, dtype_a, orders[0]), (shape_b, dtype_b, orders[1]))
    )
    return np.array_equal(_whole(a, b, 1), _whole(a, b, threads), equal_nan=True)


def _ranges(size: int, parts: int) -> list[tuple[int, int]]:
    return [(size * i // parts, size * (i + 1) // parts) for i in range(parts)]


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` for 2-D operands, with a result that does not depend on the machine's load.

    A threaded BLAS may split a product's reduction by its thread count, so its sums can depend on
    how many threads run it, and a split waits for its slowest thread: beside other busy processes
    (load average 10 on two cores) a LeNet training step took 95 ms on two OpenBLAS threads against
    20 on one (8 idle). So a product of at least ``SMALL_GEMM_MACS`` whose layout OpenBLAS's threads
    sum as one thread does (``_threads_agree``: it splits the output, not the reduction, for most
    shapes; checked once per layout) runs whole on as many threads as other processes leave cores
    free, the same sums at any count (the train_step benchmark's MLP step 4.1 -> 3.8 ms). Any other
    product is one-thread BLAS calls: a large one cut into one part per physical core (of at least
    ``PART_MACS`` each) along its longer output side, a fixed split (the same shape always sums the
    same way), the parts at once while the cores are free (``kernels.cores``) and the calling thread
    may run parallel kernels, one after another otherwise. Inside a capped region (a predictor's
    run, which sets its own thread count by the load) it is ``np.matmul``."""
    from . import parallel_allowed

    if BLAS_CAP.active:
        return np.matmul(a, b)
    m, k = a.shape
    n = b.shape[1]
    macs = m * k * n
    parts = max(1, min(physical_cores(), macs // PART_MACS)) if macs >= SMALL_GEMM_MACS else 1
    layout = _layout(a, b)
    if parts > 1 and layout is not None and _threads_agree(layout, physical_cores()):
        free = min(physical_cores(), free_cores()) if parallel_allowed() else 1
        return _whole(a, b, free if free > 1 and _threads_agree(layout, free) else 1)
    if parts == 1:
        return _whole(a, b, 1)
    out = np.empty((m, n), dtype=np.result_type(a, b))
    by_rows = m >= n
    pieces = [
        (a[r0:r1], b, out[r0:r1]) if by_rows else (a, b[:, r0:r1], out[:, r0:r1])
        for r0, r1 in _ranges(m if by_rows else n, parts)
    ]
    BLAS_CAP.enter(1)
    try:
        at_once = min(parts, free_cores()) if parallel_allowed() else 1
        helpers = [_pool().submit(np.matmul, x, y, out=o) for x, y, o in pieces[1:at_once]]
        np.matmul(*pieces[0][:2], out=pieces[0][2])
        for x, y, o in pieces[at_once:]:
            np.matmul(x, y, out=o)
        for helper in helpers:
            helper.result()
    finally:
        BLAS_CAP.exit()
    return out
