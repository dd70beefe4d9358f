"""Kernels compiled in a background process, so that a cold cache does not stall the first run.

Numba compiles a kernel at its first call for a signature, seconds each (PP-OCRv4 det on an empty
cache: 4 s of predictor creation and 21 s of first run). With background compilation on (the
default; ``PADDLECTL_BACKGROUND_COMPILE=0`` or ``set_enabled(False)`` turns it off) a call whose
kernel is neither loaded nor in Numba's disk cache does not compile in the caller. Its signature goes
to one worker process (``python -m paddlectl.framework.kernels.compile_worker``, at a lower
priority), which compiles it into the same disk cache, and the call runs what needs no compile:

* a parallel variant (``SizeDispatched``, a fused kernel's ``kernel_parallel``) runs its serial
  twin, which computes every element the same way;
* an entry point with a NumPy reference (``with_reference``) runs the reference: the same result to
  float rounding (NumPy sums in another order), never an approximation.

Once the worker has written a kernel, the next call loads it from disk (milliseconds). The worker
finishes the signatures it was given even after this process exits, then exits; Numba writes its
cache files by rename, so nothing half-written is left. A kernel the worker fails on is compiled in
the caller, which then raises what Numba raises. Only dispatchers that ``watch`` was given and whose
functions can be found again by name in a fresh process (module-level kernels, generated fused
kernels) take part; anything else compiles at first use as before.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

ENV_VAR = "PADDLECTL_BACKGROUND_COMPILE"
WORKER_MODULE = "paddlectl.framework.kernels.compile_worker"

_enabled = os.environ.get(ENV_VAR, "1").strip() not in ("0", "false", "no", "off")
_LOCAL = threading.local()


class KernelsCompiling(Exception):
    """A kernel this call needs is being compiled in the background; the caller runs its reference.
    ``key``: the generated kernel's key, where it is one (for reports)."""

    def __init__(self, what: str, key: str | None = None) -> None:
        super().__init__(what)
        self.key = key


class NoReference(Exception):
    """The reference cannot compute this call (a case its NumPy form does not cover): compile here."""


@dataclass
class Stats:
    """What background compilation did in this process: signatures sent to the worker, calls that
    ran a NumPy reference or a serial twin meanwhile, and signatures the worker failed on."""

    submitted: int = 0
    references: int = 0
    serial_twins: int = 0
    failed: list = field(default_factory=list)


STATS = Stats()


def set_enabled(on: bool) -> bool:
    """Turn background compilation on or off for this process; returns the previous setting."""
    global _enabled
    before, _enabled = _enabled, bool(on)
    return before


def deferring() -> bool:
    """Whether a cold kernel called now should raise ``KernelsCompiling`` (inside a reference's scope)."""
    return _enabled and getattr(_LOCAL, "defer", False)


def set_inference(on: bool) -> bool:
    """Whether this thread is running a predictor (``inference.threads.call_limited``): only there
    do references stand in for kernels, so training and eager code always run the same kernels (a
    resumed run stays bit-exact). Returns the previous setting."""
    before = getattr(_LOCAL, "inference", False)
    _LOCAL.inference = on
    return before


def with_reference(reference):
    """Decorator for an entry point with a NumPy twin taking the same arguments: in a predictor's
    run, while a kernel it calls is compiling in the background, the call returns
    ``reference(*args, **kwargs)`` instead."""

    def wrap(fast):
        @functools.wraps(fast)
        def call(*args, **kwargs):
            if not (_enabled and getattr(_LOCAL, "inference", False)):
                return fast(*args, **kwargs)
            defer = getattr(_LOCAL, "defer", False)
            _LOCAL.defer = True
            try:
                return fast(*args, **kwargs)
            except KernelsCompiling:
                pass
            finally:
                _LOCAL.defer = defer
            return _standing_in(reference, args, kwargs, lambda: fast(*args, **kwargs))

        call.reference = reference
        return call

    return wrap


def _standing_in(reference, args, kwargs, compile_here):
    """``reference(*args, **kwargs)`` while kernels compile; ``compile_here()`` (outside any deferring
    scope: its kernels compile in this process) where the reference has no answer."""
    try:
        result = reference(*args, **kwargs)
    except NoReference:
        return compile_here()
    STATS.references += 1
    return result


class deferred:
    """``with deferred():`` cold kernels in the block raise ``KernelsCompiling`` (after asking the
    worker for them) instead of compiling: for work that only prepares, such as a pass that
    compiles ahead of the first run."""

    def __enter__(self):
        self._defer = getattr(_LOCAL, "defer", False)
        _LOCAL.defer = True
        return self

    def __exit__(self, *exc) -> None:
        _LOCAL.defer = self._defer


class Warming:
    """What ``make()`` returns once the kernels it needs are compiled; until then ``reference``
    answers each call (for work prepared ahead of a run: a lowering, a layout)."""

    def __init__(self, make, reference) -> None:
        self._make, self._reference, self._made = make, reference, None

    def __call__(self, *args):
        if self._made is None:
            try:
                with deferred():
                    self._made = self._make()
            except KernelsCompiling:
                return _standing_in(self._reference, args, {}, lambda: self._compiled_here(*args))
        return self._made(*args)

    def _compiled_here(self, *args):
        self._made = self._make()
        return self._made(*args)


def prepared(make, reference):
    """``make()``, or a ``Warming`` stand-in while the kernels it needs compile in the background."""
    if not _enabled:
        return make()
    try:
        with deferred():
            return make()
    except KernelsCompiling:
        return Warming(make, reference)


def on_disk(dispatcher, signature) -> bool:
    """Whether Numba's disk cache holds ``dispatcher`` compiled for ``signature`` (a tuple of Numba
    types), fresh for its source file: then a call loads it instead of compiling."""
    cache = getattr(dispatcher, "_cache", None)
    index_file = getattr(cache, "_cache_file", None)
    if index_file is None:  # caching is off for it: nothing is on disk, and the worker cannot help
        return True
    key = cache._index_key(signature, dispatcher.targetctx.codegen())
    try:
        return key in index_file._load_index()
    except Exception:  # noqa: BLE001 - an unreadable index is a cache miss, as Numba treats it
        return False


def ready(dispatcher, signature, address: dict) -> bool:
    """True when calling ``dispatcher`` for ``signature`` needs no compile here (loaded, on disk,
    background compilation off, or the worker failed on it: then the caller compiles); otherwise
    the worker is asked for it (once) and this is False."""
    if not _enabled or signature in dispatcher.overloads:
        return True
    key = json.dumps({"address": address, "signature": repr(signature)}, sort_keys=True)
    state = _COMPILER.state(key)
    if state == "pending":  # the worker has not answered: no need to read the disk
        return False
    if state is not None or on_disk(dispatcher, signature):  # failed, or done: compile or load here
        return True
    return _COMPILER.request(key) == "failed"


def watch(dispatcher, address: dict, *, serial_twin: bool = False):
    """Let ``dispatcher`` (``cache=True``; found again in the worker through ``address``, see
    ``compile_worker.resolve``) compile in the background when called cold from Python: inside a
    reference's scope, or always for a parallel variant with a serial twin (``serial_twin``), the
    call raises ``KernelsCompiling`` instead of compiling. Calls from compiled code are untouched."""
    original = getattr(dispatcher, "_compile_for_args", None)
    if original is None:  # NUMBA_DISABLE_JIT: a plain Python function, nothing to compile
        return dispatcher

    def compile_for_args(*args, **kwargs):
        if not (serial_twin and _enabled) and not deferring():
            return original(*args, **kwargs)
        signature = tuple(dispatcher.typeof_pyval(a) for a in args)
        if ready(dispatcher, signature, address):
            return original(*args, **kwargs)
        if serial_twin:
            STATS.serial_twins += 1
        raise KernelsCompiling(f"{address.get('name')}{signature}")

    dispatcher._compile_for_args = compile_for_args  # the C dispatcher looks it up on the instance
    return dispatcher


def module_address(fn, variant: str | None = None) -> dict | None:
    """Where the worker finds a module-level kernel (``variant``: a ``SizeDispatched`` attribute),
    or None for a function it cannot import by name (defined inside another function)."""
    if "<" in fn.__qualname__:
        return None
    address = {"module": fn.__module__, "name": fn.__qualname__}
    if variant:
        address["variant"] = variant
    return address


def wait(timeout: float | None = None) -> bool:
    """Block until the worker has answered every signature sent so far (True), or ``timeout``
    seconds pass (False). For tests and benchmarks that need the compiled kernels next."""
    return _COMPILER.wait(timeout)


class _Compiler:
    """The worker process, started at the first request, and each signature's state."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._process: subprocess.Popen | None = None
        self._states: dict[str, str] = {}

    def state(self, key: str) -> str | None:
        """ "pending", "done" or "failed" for a request (its line), None if never sent."""
        return self._states.get(key)

    def request(self, key: str) -> str:
        """The request's state; sent to the worker if new."""
        with self._lock:
            state = self._states.get(key)
            if state is None:
                state = "pending" if self._send(key) else "failed"
                self._states[key] = state
                STATS.submitted += 1
                if state == "failed":
                    STATS.failed.append(key)
            return state

    def _send(self, key: str) -> bool:
        try:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            self._process.stdin.write(key + "\n")
            self._process.stdin.flush()
            return True
        except OSError:
            return False

    def _start(self) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", WORKER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, ENV_VAR: "0"},
        )
        threading.Thread(target=self._read, args=(process,), name="paddlectl-compile-answers", daemon=True).start()
        return process

    def _read(self, process: subprocess.Popen) -> None:
        """The worker's answers (one JSON line per request); when it ends, what it left unanswered failed."""
        for line in process.stdout:
            try:
                answer = json.loads(line)
                key, ok = answer["key"], bool(answer["ok"])
            except (ValueError, KeyError, TypeError):
                continue
            with self._lock:
                self._states[key] = "done" if ok else "failed"
                if not ok:
                    STATS.failed.append(f"{key}: {answer.get('error', '')}")
                self._lock.notify_all()
        with self._lock:
            for key, state in self._states.items():
                if state == "pending":
                    self._states[key] = "failed"
            self._lock.notify_all()

    def wait(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while any(state == "pending" for state in self._states.values()):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._lock.wait(left)
            return True


_COMPILER = _Compiler()
