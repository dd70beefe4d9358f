"""A batch run as parts on the predictor's threads, each part on one thread with serial kernels.

Why: on two cores a run that shares each op over both threads pays a wake-up per parallel region
(~0.1-0.2 ms on this workplace's VMs) and keeps the second core idle in every serial kernel; two
halves of the batch, each a whole run on one core, pay neither. PP-OCRv4 rec on 6 lines, idle: 111
-> 96 ms (onnxruntime 102). Parts of small ops lose instead (their halves queue for the GIL between
kernels), so a batch is split only when each part's ops produce at least ``MIN_PART_ELEMENTS``
elements on average.

When: only a program that provably keeps its items apart. Every input leads with the same batch
symbol; that symbol appears in a value's shape at most once and only as a whole dim (its position is
the value's batched axis); an op reading a batched value gives batched outputs, and its record's
``items`` rule (``core.items``) confirms it computes each item from that item alone. Any op without
a rule, a sub-block, or a mixing op (softmax over the batch, a reshape that merges it) keeps the
program whole. A program with a fixed batch (an ONNX file exported at batch 8) is first made general
(every shape inferred again with the batch a symbol); the parts run that copy.
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np

from ..core import symbolic
from ..core.op import REGISTRY
from ..kernels.cores import helper_pool
from ..static.executor import Executor, bind_inputs
from ..static.ir import Program
from ..static.parser import parse_program
from ..static.printer import print_program
from ..static.verifier import infer_outputs, verify
from .threads import call_limited

MIN_PART_ELEMENTS = 1 << 16
"""A part's ops must produce this many elements on average for the split to pay. Halves against the
whole batch on two threads, idle, in one process: PP-OCR cls (~10k elements per line per op) at
batch 2 / 4 / 6 / 8 / 16 1.72x / 1.41x / 1.27x / 0.84x / 0.76x (parts of 10k-83k), PP-OCRv4 rec (~76k
per line) at batch 2 / 4 0.81x / 0.85x: the crossover is ~40k."""

_SOURCES = ("input", "param", "constant")
SYMBOL = "batch"
"""The batch dim's name in a fixed-batch program made general (``generalized``)."""


def _batched_axis(shape, symbol: str) -> int | None | bool:
    """Where ``symbol`` is a whole dim of ``shape`` (once), None when absent, False when it appears
    twice or inside an expression."""
    found = None
    for axis, dim in enumerate(shape):
        if dim == symbol:
            if found is not None:
                return False
            found = axis
        elif isinstance(dim, str) and symbol in symbolic.symbols(dim):
            return False
    return found


def item_axes(program: Program) -> tuple[list[int], str] | None:
    """(each output's batched axis, the batch symbol) when the program computes each item of its
    inputs' leading dim from that item alone; None when that cannot be shown."""
    inputs = program.inputs
    symbol = inputs[0].shape[0] if inputs and inputs[0].shape else None
    if not isinstance(symbol, str) or not symbol.isidentifier():
        return None
    if any(_batched_axis(v.shape, symbol) != 0 for v in inputs):
        return None
    axes: dict[int, int] = {id(v): 0 for v in inputs}
    for op in program.block.ops:
        if op.blocks:
            return None
        if op.name in _SOURCES:
            if op.name != "input" and any(_batched_axis(v.shape, symbol) is not None for v in op.outputs):
                return None
            continue
        in_axes = [None if v is None else axes.get(id(v)) for v in op.inputs]
        out_axes = [_batched_axis(v.shape, symbol) for v in op.outputs]
        if any(a is False for a in out_axes):
            return None
        if all(a is None for a in in_axes):
            if any(a is not None for a in out_axes):
                return None  # the batch size made into data: not an item-wise op
            continue
        rule = REGISTRY[op.name].items if op.name in REGISTRY else None
        if rule is None or any(a is None for a in out_axes):
            return None
        shapes = [() if v is None else v.shape for v in op.inputs]
        if rule is not True and not rule(op.attrs, in_axes, out_axes, shapes, [v.shape for v in op.outputs]):
            return None
        axes.update((id(v), a) for v, a in zip(op.outputs, out_axes, strict=True))
    out = [axes.get(id(v)) for v in program.outputs]
    return (out, symbol) if all(a is not None for a in out) else None


def generalized(program: Program) -> Program | None:
    """A copy of a fixed-batch program (every input leads with the same size, at least 2) with that
    dim made the symbol ``batch`` and every op's shape inferred again; None when a shape rule refuses
    or the program has sub-blocks. Whether items stay apart is then ``item_axes``' question (a
    reshape to a constant ``[8, ...]`` now gives a shape without the symbol, and keeps it whole)."""
    inputs = program.inputs
    sizes = {v.shape[0] if v.shape else None for v in inputs}
    (size,) = sizes if len(sizes) == 1 else (None,)
    if not isinstance(size, int) or size < 2 or any(op.blocks for op in program.block.ops):
        return None
    copy = parse_program(print_program(program), program.weights)
    for v in copy.inputs:
        v.shape = (SYMBOL, *v.shape[1:])
    try:
        for op in copy.block.ops:
            if op.name not in _SOURCES:
                for v, spec in zip(op.outputs, infer_outputs(op.name, op.inputs, op.attrs), strict=True):
                    v.shape = spec.shape
        return verify(copy)
    except Exception:  # noqa: BLE001 - a shape rule that cannot take the symbol: the program runs whole
        return None


class BatchSplit:
    """Decides per input shape whether a run splits, and runs the parts (see the module's doc)."""

    def __init__(self, program: Program, executor: Executor) -> None:
        self._program = program
        self._executor = executor
        self._parts: dict[tuple, int] = {}
        self._lock = threading.Lock()

    @functools.cached_property
    def _plan(self) -> tuple[list[int], Program, Executor] | None:
        """(the outputs' batched axes, the program the parts run, its executor), or None: no split."""
        found = item_axes(self._program)
        if found is not None:
            return found[0], self._program, self._executor
        program = generalized(self._program)
        found = None if program is None else item_axes(program)
        return None if found is None else (found[0], program, Executor(program, free_dead=True))

    def parts(self, arrays: list, threads: int) -> int:
        """How many parts a run of ``arrays`` takes with ``threads`` threads (1: run it whole)."""
        if threads < 2 or any(a.ndim == 0 for a in arrays) or self._plan is None:
            return 1  # (a malformed feed runs whole, and the executor names what is wrong with it)
        key = (threads, *(a.shape for a in arrays))
        with self._lock:
            if key not in self._parts:
                self._parts[key] = self._count(arrays, threads)
            return self._parts[key]

    def _count(self, arrays: list, threads: int) -> int:
        _, program, _ = self._plan
        batch = arrays[0].shape[0]
        bindings = bind_inputs(program, arrays)
        ops = [op for op in program.block.ops if op.name not in _SOURCES]
        produced = sum(
            math.prod(symbolic.evaluate(d, bindings) if isinstance(d, str) else d for d in v.shape)
            for op in ops
            for v in op.outputs
        )
        per_item = produced / max(1, len(ops)) / max(1, batch)
        parts = min(threads, batch)
        while parts > 1 and batch // parts * per_item < MIN_PART_ELEMENTS:
            parts -= 1
        return parts

    def run(self, arrays: list, parts: int) -> list[np.ndarray] | None:
        """Each of ``parts`` slices of the batch a whole run on one thread (the last on this one), the
        outputs joined along their batched axes. None when a fixed-batch program's general copy fails
        to run (a lowering that needs the fixed size): that model then always runs whole."""
        out_axes, program, executor = self._plan
        if program is not self._program:
            try:
                return self._run(out_axes, executor, arrays, parts)
            except MemoryError:
                raise
            except Exception:  # noqa: BLE001 - the copy is ours, not the user's model: fall back to it
                self._plan = None
                return None
        return self._run(out_axes, executor, arrays, parts)

    @staticmethod
    def _run(out_axes, executor, arrays: list, parts: int) -> list[np.ndarray]:
        batch = arrays[0].shape[0]
        bounds = [batch * i // parts for i in range(parts + 1)]
        slices = [[a[lo:hi] for a in arrays] for lo, hi in zip(bounds, bounds[1:], strict=False)]
        futures = [helper_pool().submit(call_limited, 1, executor.run, part) for part in slices[:-1]]
        last = call_limited(1, executor.run, slices[-1])
        results = [f.result() for f in futures] + [last]
        return [np.concatenate([r[i] for r in results], axis=axis) for i, axis in enumerate(out_axes)]
