"""Running a generated elementwise kernel: iteration space, broadcasting and the eager entry point.

At run time the inputs are viewed as flat arrays with per-dim strides in elements (0 where an
input broadcasts), and dims that are contiguous for every input are merged, so an all-same-shape
call is one flat loop whatever its rank. That layout and the kernel are worked out once per body,
input shapes and dtypes (a ``Launch``, cached by ``launch``). The compiler's ``fused_elementwise``
op runs its groups through it, and every elementwise op whose record has an ``expr`` runs its
eager kernel through ``run``: one generated loop per expression, no hand-written ones.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import ShapeError
from . import ELEMENTWISE_PARALLEL_MIN_SIZE, PARALLEL_MIN_SIZE, parallel_allowed
from .background import with_reference
from .codegen import expression, libm_bound
from .kernel_cache import get_kernel
from .numpy_body import evaluate

_ROW_TARGET = 4096  # elements per row when a flat loop is cut into rows
_SHORT_ROW = 64
_WIDEN_MAX = 1 << 16
_WIDEN_MIN_ROWS = 512
"""A leaf that broadcasts over some trailing dims but not others ([512, 1, 1] against NCHW
[16, 512, 2, 2]) leaves rows as short as a plane (4 elements: 8192 rows at ~15 ns each, 0.13 ms for
32K elements). Where rows would be shorter than ``_SHORT_ROW``, such leaves of at most
``_WIDEN_MAX`` elements once widened are materialised over the trailing dims that make rows at
least that long (a 2048-element copy per call), and the rows coalesce. The copy costs ~4 us a
call, so only from ``_WIDEN_MIN_ROWS`` rows: [4, 64, 8] + [64, 1] (256 rows) runs in 3.8 us as it
is, 4.5 us widened; [64, 16, 4] + [16, 1] (1024 rows) 10.5 against 4.7 us; a [6, 22, 1, 1] bias of
a PP-OCR squeeze-excite block coalesces to 6 rows, 2.7 against 6.9 us."""


def _broadcast_strides(own: tuple, shape: tuple) -> list[int]:
    """Element strides of a C-contiguous array of shape ``own`` broadcast to ``shape`` (0 on broadcast dims)."""
    pad = len(shape) - len(own)
    strides = [0] * len(shape)
    step = 1
    for axis in range(len(own) - 1, -1, -1):
        if own[axis] != 1:
            strides[pad + axis] = step
        step *= own[axis]
    return strides


def _coalesce(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merge neighbouring dims that every operand walks contiguously (stride[d] == stride[d+1]*shape[d+1])."""
    dims = [[shape[d], [s[d] for s in strides]] for d in range(len(shape)) if shape[d] != 1]
    merged: list = []
    for size, st in dims:
        if merged and all(prev == cur * size for prev, cur in zip(merged[-1][1], st, strict=True)):
            merged[-1] = [merged[-1][0] * size, st]
        else:
            merged.append([size, st])
    return [m[0] for m in merged], [[m[1][i] for m in merged] for i in range(len(strides))]


def _rows(shape: list[int], strides: list[list[int]]):
    """At least two dims (the kernel's rows and inner loop); a single long dim is cut into rows."""
    if len(shape) >= 2:
        return shape, strides
    if not shape:
        return [1, 1], [[0, 1] for _ in strides]  # one element: every leaf reads it as contiguous
    n = shape[0]
    inner = math.gcd(n, _ROW_TARGET) if n > _ROW_TARGET else n
    if inner < 256:
        inner = max(n, 1)  # an empty array is 0 rows of 1
    return [n // inner, inner], [[s[0] * inner, s[0]] for s in strides]


def _widened(shapes: tuple, full: tuple) -> tuple:
    """Each leaf's shape to run with (see ``_SHORT_ROW``): itself, or widened over the trailing dims."""
    size, k = 1, len(full)
    while k > 0 and size < _SHORT_ROW:
        k -= 1
        size *= full[k]
    rows = _iteration(shapes, full, None)[0]
    if size < _SHORT_ROW or rows[-1] >= _SHORT_ROW or math.prod(rows[:-1]) < _WIDEN_MIN_ROWS:
        return shapes
    widened = []
    for own in shapes:
        padded = (1,) * (len(full) - len(own)) + tuple(own)
        kept = {d == f for d, f in zip(padded[k:], full[k:], strict=True) if f != 1}
        target = padded[:k] + tuple(full[k:])
        widened.append(target if len(kept) == 2 and math.prod(target) <= _WIDEN_MAX else own)
    return tuple(widened)


def _iteration(shapes: tuple, full: tuple, split: int | None):
    """(shape, strides, materialise): the kernel's iteration space for inputs of these shapes."""
    strides = [_broadcast_strides(s, full) for s in shapes]
    if split is None:
        shape, strides = _rows(*_coalesce(list(full), strides))
        return np.asarray(shape, np.int64), np.asarray(strides, np.int64).reshape(len(shapes), -1), False
    outer, so = _coalesce(list(full[:split]), [s[:split] for s in strides])
    inner, si = _coalesce(list(full[split:]), [s[split:] for s in strides])
    if len(inner) > 1:  # a leaf broadcasting inside the reduced dims: materialise it, then it coalesces
        shape, strides, _ = _iteration((full,) * len(shapes), full, split)
        return shape, strides, True
    inner = inner or [1]
    si = [s or [0] for s in si]
    shape = [*outer, *inner] if outer else [1, *inner]
    strides = [[*a, *b] if outer else [0, *b] for a, b in zip(so, si, strict=True)]
    return np.asarray(shape, np.int64), np.asarray(strides, np.int64).reshape(len(shapes), -1), False


def inner_kinds(strides: np.ndarray) -> str:
    """Each leaf's stride along the inner loop as ``codegen.INNER_KINDS`` letters: the generated
    kernel is specialised to them (one row of a broadcast leaf is a single value)."""
    return "".join("c" if s == 1 else "b" if s == 0 else "s" for s in strides[:, -1])


def probe_inner_kinds(shapes: tuple, reduce=None, axis=None) -> str:
    """``inner_kinds`` for symbolic input shapes, taking every symbol as a size above 1: what a
    compile ahead of the first run should build (a run where a symbol is 1 compiles its own)."""
    concrete = tuple(tuple(d if isinstance(d, int) else 2 for d in shape) for shape in shapes)
    full = np.broadcast_shapes(*concrete)
    if reduce is None:
        return inner_kinds(_iteration(_widened(concrete, full), full, None)[1])
    return inner_kinds(_iteration(concrete, full, check_trailing(axis, len(full)))[1])


def _axes(axis, ndim: int) -> set[int]:
    """A reduction's axes as non-negative ints (an int or a sequence; None is every axis)."""
    if axis is None:
        return set(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else axis
    if any(not -ndim <= int(a) < ndim for a in axes):
        raise ShapeError(f"fused_elementwise: axis {axis} is out of range for {ndim} dims")
    return {int(a) % ndim for a in axes}


def reduced(shape: tuple, axis, keepdim: bool) -> tuple:
    axes = _axes(axis, len(shape))
    if keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def check_trailing(axis, ndim: int) -> int:
    axes = sorted(_axes(axis, ndim))
    if axes != list(range(ndim - len(axes), ndim)):
        raise ShapeError(f"fused_elementwise: a fused reduction must be over the last axes, got axis={axis}")
    return ndim - len(axes)


class Launch:
    """One fused op at fixed input shapes and dtypes: its kernel, iteration space and result shape,
    worked out once, so a call only runs the kernel, over its ``inplace`` input (the in-place kernel,
    see ``codegen``) or into a new array (that input is read-only or not contiguous, or none is)."""

    def __init__(self, body, ops, dtypes, shapes, dtype, reduce, axis, keepdim, inplace, eager=False) -> None:
        self.dtype = np.dtype(dtype)
        try:
            full = np.broadcast_shapes(*shapes)
        except ValueError:
            listed = ", ".join(str(list(s)) for s in shapes)
            raise ShapeError(
                f"fused_elementwise ({'+'.join(ops)}): inputs {listed} do not broadcast together"
            ) from None
        self.full = full
        split = None if reduce is None else check_trailing(axis, len(full))
        self.out_shape = full if reduce is None else reduced(full, axis, keepdim)
        usable = inplace is not None and reduce is None and shapes[inplace] == full and dtypes[inplace] == self.dtype
        self.inplace = inplace if usable else None
        widened = shapes if split is not None else _widened(shapes, full)
        self.widen = [(k, w) for k, (w, own) in enumerate(zip(widened, shapes, strict=True)) if w != own]
        self.shape, self.strides, self.materialise = _iteration(widened, full, split)
        self._kernel = functools.partial(get_kernel, body, dtypes, self.dtype, reduce, in_memory_fallback=eager)
        self._inner = inner_kinds(self.strides)
        self._own = self._kernel(self.inplace, self._inner)
        self._copying = None if self.inplace is not None else self._own
        self.empty = math.prod(self.out_shape) == 0
        threshold = PARALLEL_MIN_SIZE if libm_bound(body, self.dtype) else ELEMENTWISE_PARALLEL_MIN_SIZE
        self.big = math.prod(full) >= threshold and math.prod(self.shape[:-1]) > 1

    def __call__(self, *arrays) -> np.ndarray:
        if self.empty:
            return np.empty(self.out_shape, self.dtype)
        if self.materialise:
            arrays = [np.broadcast_to(a, self.full) for a in arrays]
        for k, shape in self.widen:
            arrays = (*arrays[:k], np.ascontiguousarray(np.broadcast_to(arrays[k], shape)), *arrays[k + 1 :])
        flat = [a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1) for a in arrays]
        if self.inplace is not None:
            target = arrays[self.inplace]
            if target.flags.c_contiguous and target.flags.writeable:
                self._function(self._own)(self.shape, self.strides, *flat)
                return target
        if self._copying is None:  # compiled on first need: a fused epilogue's input is almost always fresh
            self._copying = self._kernel(None, self._inner)
        out = np.empty(self.out_shape, self.dtype)
        self._function(self._copying)(out.reshape(-1), self.shape, self.strides, *flat)
        return out

    def _function(self, kernel):
        """The parallel variant for large arrays (where this thread may run one), else the serial."""
        return kernel.parallel_function() if self.big and parallel_allowed() else kernel.function


@functools.lru_cache(maxsize=4096)
def launch(
    body, ops, dtypes, shapes, dtype, reduce=None, axis=None, keepdim=False, inplace=None, eager=False
) -> Launch:
    """The Launch for these attrs (``ops`` and ``axis`` as tuples) and input shapes/dtypes, made once;
    ``eager`` (an op's own kernel) compiles in memory where the kernel cache is unusable."""
    return Launch(body, ops, dtypes, shapes, dtype, reduce, axis, keepdim, inplace, eager)


_WORK = (np.dtype(np.float32), np.dtype(np.float64))


def _run_reference(text: str, name: str, *arrays: np.ndarray) -> np.ndarray:
    """``run`` by NumPy, while the kernel compiles in the background (``kernels.background``)."""
    dtype = arrays[0].dtype
    work = dtype if dtype in _WORK else _WORK[0]
    out = evaluate(_body(text, len(arrays)), [a.astype(work, copy=False) for a in arrays], work)
    return out if work == dtype else out.astype(dtype)


@with_reference(_run_reference)
def run(text: str, name: str, *arrays: np.ndarray) -> np.ndarray:
    """An op's scalar expression ``text`` (over ``{x}``, ``{y}``, ...) applied to ``arrays`` by its
    generated kernel, in the first array's float type (half precision computes in float32 and
    rounds back, as the hand-written kernels did); ``name`` labels the kernel for reports."""
    dtype = arrays[0].dtype
    work = dtype if dtype in _WORK else _WORK[0]
    if any(a.dtype != work for a in arrays):
        arrays = tuple(a.astype(work) for a in arrays)
    body = _body(text, len(arrays))
    shapes = tuple(a.shape for a in arrays)
    out = launch(body, (name,), (work,) * len(arrays), shapes, work, eager=True)(*arrays)
    return out if work == dtype else out.astype(dtype)


@functools.lru_cache(maxsize=1024)
def _body(text: str, n: int) -> str:
    return f"t0 = {expression(text, [f'x{i}' for i in range(n)])}"
