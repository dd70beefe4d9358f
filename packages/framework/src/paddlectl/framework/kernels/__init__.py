"""Numba kernels: pure functions over arrays, compiled once and cached on disk (``cache=True``).

Parallel kernels prefer Numba's OpenMP threading layer with passive waiting after a short spin:
workers spinning for libgomp's default 300,000 rounds fight OpenBLAS's threads for the cores between
a kernel and the GEMM after it (measured up to 10x slower convolutions on two cores), while workers
that sleep at once make every parallel region pay a wake-up (~70 us on this workplace's VMs, against
~2 us for a spinning worker: 24 products of MiniLM's batch-1 run and their attention paid ~2 ms).
``GOMP_SPINCOUNT`` of ``SPIN_ROUNDS`` (about 100 us) covers the gaps between one op's region and
the next op's and leaves OpenBLAS alone (training steps within noise). The layer is thread-safe, so
predictors and eager code may run from several Python threads. Where OpenMP is missing Numba falls
back to TBB, then to ``workqueue`` (not thread-safe: see ``layer_is_thread_safe``).
``NUMBA_THREADING_LAYER``, ``OMP_WAIT_POLICY`` and ``GOMP_SPINCOUNT`` set by the user win.
"""

import os

SPIN_ROUNDS = 10_000
"""libgomp spin rounds before an idle worker sleeps (3,000: ~40 us, too short for MiniLM's gaps)."""

if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["GOMP_SPINCOUNT"] = str(SPIN_ROUNDS)

import contextlib  # noqa: E402
import functools  # noqa: E402
import threading  # noqa: E402
import types  # noqa: E402

import numba  # noqa: E402 - the OpenMP runtime reads OMP_WAIT_POLICY when it loads

from . import cache_stamp  # noqa: E402

cache_stamp.install()  # before any cached kernel is defined

from . import background  # noqa: E402
from .background import KernelsCompiling  # noqa: E402

if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "default"
    numba.config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]


def njit(fn=None, **options):
    """``numba.njit`` with the GIL released: kernels touch no Python object, so predictors run from
    several Python threads (OCR's images two at a time, serving's workers) run their kernels at once
    instead of taking turns. The project's one Numba decorator. A cached module-level kernel may
    compile in the background when called cold (``kernels.background``)."""
    options["nogil"] = True

    def build(f):
        dispatcher = numba.njit(f, **options)
        address = background.module_address(f) if options.get("cache") else None
        return dispatcher if address is None else background.watch(dispatcher, address)

    return build if fn is None else build(fn)


def layer_is_thread_safe() -> bool:
    """Whether parallel kernels may run from two Python threads at once (not under workqueue)."""
    try:
        return numba.threading_layer() in ("omp", "tbb")
    except ValueError:  # no parallel kernel has run yet, so the layer is not chosen yet
        return str(numba.config.THREADING_LAYER) in ("omp", "tbb", "safe", "threadsafe")


PARALLEL_MIN_SIZE = 1 << 18
"""Below this many elements in a kernel's first argument, waking worker threads costs more than
the work (and on a loaded machine a descheduled worker stalls the whole region). A region whose
worker sleeps costs ~55-75 us on this workplace's 2-core VMs (a futex wake), so a
depthwise conv gains from the second core only past ~250k inputs (PP-OCR cls's [6,88,3,96]:
0.26 ms serial, 0.32 ms parallel; [6,104,6,96]: 0.67 vs 0.49 ms)."""

ELEMENTWISE_PARALLEL_MIN_SIZE = 1 << 19
"""The same for fused elementwise kernels, which do a few operations per element: memory-bound
and cheap. With workers that slept at once they gained from a second core only from a few million
elements (1M: 97 us serial, 231 us parallel; 4M: 848 vs 744 us; the threshold was 2^21); with the
short spin the regions of a model's run find their worker awake, and from 2^19 PP-OCRv4 det
640x320 on two threads ran 0.85-0.88x onnxruntime against 0.94x (cls unchanged; 2^18 the same
as 2^19, and ``PARALLEL_MIN_SIZE`` at 2^16 made cls 15% slower)."""


_LOCAL = threading.local()


@functools.cache
def blas_threads_spin() -> bool:
    """Whether NumPy's BLAS is a threaded OpenBLAS whose idle threads busy-wait (``_blas_env``
    could not shorten their spin, or the user chose a long one): then a parallel kernel between
    two GEMMs fights a spinning BLAS thread for a core, and the serial variants run instead.
    Asked once, at the first kernel call big enough to go parallel."""
    from .. import _blas_env

    if _blas_env.SPIN_SHORTENED:
        return False
    from threadpoolctl import threadpool_info

    return any(
        i.get("internal_api") == "openblas" and i.get("threading_layer") == "pthreads" and i.get("num_threads", 1) > 1
        for i in threadpool_info()
    )


def set_serial(serial: bool) -> bool:
    """Whether this Python thread runs every kernel's serial variant from now on; returns the
    previous setting (``serial_kernels`` without a context manager's cost, for per-run caps)."""
    before = getattr(_LOCAL, "serial", False)
    _LOCAL.serial = serial
    return before


@contextlib.contextmanager
def serial_kernels():
    """Within it, this Python thread runs every kernel's serial variant: under a one-thread cap a
    parallel region only adds its scheduling (measured 1.6x slower max pooling at one thread)."""
    before = set_serial(True)
    try:
        yield
    finally:
        set_serial(before)


def parallel_allowed() -> bool:
    """Whether this thread may run parallel variants now (see ``serial_kernels``, ``blas_threads_spin``)."""
    return not getattr(_LOCAL, "serial", False) and not blas_threads_spin()


class SizeDispatched:
    """One kernel compiled twice, parallel and serial (``prange`` is ``range`` there); each call
    picks by the size of its first argument. Both variants are cached on disk under their own
    names. A thread inside ``serial_kernels()``, or any thread while ``blas_threads_spin()``, gets
    the serial variant. Both use NumPy's error model: a division by zero gives inf/nan as NumPy
    does, and a loop containing a division can vectorise (Python's zero check stops LLVM)."""

    def __init__(self, fn, min_size: int = PARALLEL_MIN_SIZE, fastmath=frozenset(), reference=None) -> None:
        # as ``njit`` does (the GIL released), each variant watched under its own address below;
        # fastmath as a set: Numba refuses a frozenset
        options = {"cache": True, "nogil": True, "fastmath": set(fastmath), "error_model": "numpy"}
        self.parallel = numba.njit(fn, parallel=True, **options)
        serial = types.FunctionType(
            fn.__code__, fn.__globals__, fn.__name__ + "_serial", fn.__defaults__, fn.__closure__
        )
        serial.__qualname__ = fn.__qualname__ + "_serial"
        serial.__module__ = fn.__module__
        self.serial = numba.njit(serial, **options)
        for variant in ("parallel", "serial"):
            address = background.module_address(fn, variant)
            if address is not None:
                background.watch(getattr(self, variant), address, serial_twin=variant == "parallel")
        self.min_size = min_size
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__
        self.reference = reference
        if reference is not None:
            self._sized = background.with_reference(reference)(self._sized)

    def __call__(self, *args):
        return self._sized(*args)

    def _sized(self, *args):
        return self.run(getattr(args[0], "size", 0) >= self.min_size and parallel_allowed(), *args)

    def run(self, parallel: bool, *args):
        """The parallel variant if ``parallel`` (and compiled: else, while it compiles in the
        background, the serial one), else the serial."""
        if parallel:
            try:
                return self.parallel(*args)
            except KernelsCompiling:
                pass
        return self.serial(*args)


def parallel_kernel(fn=None, *, fastmath=frozenset(), reference=None):
    """Decorator for array kernels with ``prange`` loops: see ``SizeDispatched``. ``fastmath`` takes
    Numba's flags (``fastmath.REASSOC`` lets reductions vectorise); ``reference`` is a NumPy twin
    run while the kernel compiles in the background (``kernels.background``)."""
    if fn is None:
        return lambda f: SizeDispatched(f, fastmath=fastmath, reference=reference)
    return SizeDispatched(fn)


def lazy_vectorize(signatures, **options):
    """``numba.vectorize(signatures, **options)``, built at the first call rather than at import:
    loading a ufunc's compiled loops costs tens of milliseconds, and the first of a process ~0.3 s
    of Numba start-up, which ``import paddlectl.framework`` should not pay for ops a script never
    calls. The result is called like the ufunc (a Python-level function, not for use in jitted code)."""

    def wrap(fn):
        build = functools.cache(lambda: numba.vectorize(signatures, **options)(fn))

        @functools.wraps(fn)
        def call(*args, **kwargs):
            return build()(*args, **kwargs)

        return call

    return wrap
