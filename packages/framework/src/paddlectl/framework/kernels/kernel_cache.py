"""Fused kernels on disk: one generated module per group, compiled once, loaded from Numba's cache.

A kernel's module is ``fused_<hash>.py`` in the cache directory (``$PADDLECTL_KERNEL_CACHE`` or
``~/.cache/paddlectl/kernels``), the hash taken over the generated source, which is a function of
the group's body, dtypes, reduction and its leaves' inner-loop strides. The kernel is
``@njit(cache=True)``, so Numba keeps the machine code beside the module (``__pycache__``) and a
second process loads it instead of compiling. The module file is only (re)written when its text
differs from what we generate now (an atomic rename, so a concurrent reader sees one whole file),
and it is compared before every import: what is imported is always exactly the text this process
generated.

Every compile or load is timed and recorded (:class:`KernelStats`) for the compile report.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from . import background
from .codegen import kernel_source
from .module_file import load_module

ENV_VAR = "PADDLECTL_KERNEL_CACHE"


def cache_dir() -> Path:
    """Where generated kernels live: ``$PADDLECTL_KERNEL_CACHE`` or ``~/.cache/paddlectl/kernels``."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured) if configured else Path.home() / ".cache" / "paddlectl" / "kernels"


@dataclass
class KernelStats:
    """How one kernel was obtained: ``source`` is ``compiled``, ``disk`` (Numba's cache), ``memory``
    or ``compiled-uncached`` (no usable cache directory)."""

    key: str
    path: str
    source: str
    seconds: float


@dataclass
class Kernel:
    """A loaded kernel: ``function`` (serial, compiled when loaded) and, compiled on first use,
    ``parallel_function()`` (rows split over Numba's threads, for large arrays)."""

    key: str
    path: Path | None
    function: object
    stats: KernelStats
    module: object = None

    def parallel_function(self):
        """The parallel variant, or the serial one while the parallel compiles in the background."""
        function = self.module.kernel_parallel
        if not function.signatures:
            with _LOCK:
                if not function.signatures:
                    signature = self.function.signatures[0]  # the serial one's
                    address = {"path": str(self.path), "name": "kernel_parallel"}
                    if self.path is not None and not background.ready(function, signature, address):
                        background.STATS.serial_twins += 1
                        return self.function
                    function.compile(signature)
                    function.disable_compile()
        return function


_LOCK = threading.Lock()
_LOADED: dict[tuple, Kernel] = {}


def kernel_key(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def _signature(input_dtypes, out_dtype, inplace=None):
    """Inputs typed read-only (weights are), which writable arrays convert to: one compile serves both;
    an in-place kernel's target leaf is writable and there is no ``out``."""
    leaves = [numba.types.Array(numba.from_dtype(d), 1, "C", readonly=i != inplace) for i, d in enumerate(input_dtypes)]
    index = (numba.types.int64[::1], numba.types.int64[:, ::1])
    if inplace is not None:
        return (*index, *leaves)
    return (numba.types.Array(numba.from_dtype(out_dtype), 1, "C"), *index, *leaves)


def _write_module(path: Path, source: str) -> None:
    """Write the module by a rename over it, so a concurrent reader sees one whole file (not through
    ``utils.fileio``: the kernels sit below ``utils``, whose package imports the framework)."""
    try:
        current = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        current = None
    if current != source:  # rewriting an identical file would change its stamp and void Numba's cache
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            temporary.write_text(source, encoding="utf-8")
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)


def get_kernel(
    body: str,
    input_dtypes,
    out_dtype,
    reduce: str | None = None,
    inplace: int | None = None,
    inner: str | None = None,
    in_memory_fallback: bool = False,
) -> Kernel:
    """The compiled kernel for a group (writing over leaf ``inplace`` if given, with the leaves'
    inner-loop strides ``inner``, see ``codegen``), from this process, Numba's disk cache, or a
    fresh compile. Without a usable cache directory this raises OSError, unless
    ``in_memory_fallback`` (an eager op's kernel, which must run anyway): then it is compiled
    without a file, each process anew (``source`` ``compiled-uncached``)."""
    input_dtypes = tuple(np.dtype(d) for d in input_dtypes)
    out_dtype = np.dtype(out_dtype)
    memo = (body, input_dtypes, out_dtype, reduce, inplace, inner)
    with _LOCK:
        kernel = _LOADED.get(memo)
        if kernel is not None:
            stats = KernelStats(kernel.key, str(kernel.path), "memory", 0.0)
            return Kernel(kernel.key, kernel.path, kernel.function, stats, kernel.module)
        source = kernel_source(body, list(input_dtypes), out_dtype, reduce, inplace, inner)
        key = kernel_key(source)
        start = time.perf_counter()
        try:
            path, module = _import(source, key)
        except OSError:
            if not in_memory_fallback:
                raise
            path, module = None, _exec_uncached(source, key)
        function = module.kernel
        signature = _signature(input_dtypes, out_dtype, inplace)
        if path is not None and background.deferring():
            if not background.ready(function, signature, {"path": str(path), "name": "kernel"}):
                raise background.KernelsCompiling(f"fused kernel {key}", key)
        hits = sum(function.stats.cache_hits.values())
        function.compile(signature)
        function.disable_compile()  # writable inputs convert to the read-only signature: no second compile
        seconds = time.perf_counter() - start
        from_disk = sum(function.stats.cache_hits.values()) > hits
        how = "compiled-uncached" if path is None else "disk" if from_disk else "compiled"
        kernel = Kernel(key, path, function, KernelStats(key, str(path), how, seconds), module)
        _LOADED[memo] = kernel
        return kernel


def _import(source: str, key: str):
    """The generated module written to (or found in) the cache directory and imported from there
    (once per process: a kernel still compiling in the background is asked for again)."""
    directory = cache_dir()
    path = directory / f"fused_{key}.py"
    module = _MODULES.get(path)
    if module is not None:
        return path, module
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(
            f"kernel cache: cannot create {directory} ({exc}); set {ENV_VAR} to a writable directory"
        ) from None
    _write_module(path, source)
    module = load_module(path, expected=source)
    _MODULES[path] = module
    return path, module


_MODULES: dict[Path, types.ModuleType] = {}


def _exec_uncached(source: str, key: str):
    """The generated module run from its text alone (Numba caches only functions read from a file)."""
    module = types.ModuleType(f"paddlectl_kernels.uncached_{key}")
    exec(compile(source.replace("cache=True", "cache=False"), module.__name__, "exec"), module.__dict__)  # noqa: S102 - our own checked source
    return module


def clear_memory() -> None:
    """Forget kernels loaded in this process (the disk cache stays): the next use loads from disk."""
    with _LOCK:
        _LOADED.clear()
        _MODULES.clear()
