"""What every pass shares: the pass record, the context passes write their findings into, and
the use map passes consult before they rewrite.

A pass is a function ``run(program, ctx) -> int`` that rewrites ``program`` in place and returns
how many ops it changed; the manager verifies the program after a pass that changed any (so a
pass that rewrites must count what it rewrote). Passes never change results
beyond float rounding: an op whose result could differ between two runs (its record says
``deterministic=False``) is never merged, folded or fused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...core.op import REGISTRY
from ..ir import Block, Operation, Program


def deterministic(op: Operation) -> bool:
    """Whether two runs of ``op`` on the same inputs agree (control flow and inputs count as such)."""
    record = REGISTRY.get(op.name)
    return record is None or record.deterministic


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[Program, PassContext], int]
    doc: str


@dataclass
class PassContext:
    """Inputs to the passes (which params may be folded) and what they leave behind."""

    foldable: Callable[[str], bool] = lambda name: True
    threads: int = 1  # the predictor's thread count (Config.set_cpu_math_library_num_threads)
    compile_report: Any = None  # set by fuse_elementwise (compiler.report.CompileReport)
    memory: Any = None  # set by memory_plan (passes.memory_plan.MemoryPlanner)
    notes: dict = field(default_factory=dict)


def users(program: Program) -> dict[int, list]:
    """id(value) -> every op (any block) reading it, and every block yielding it."""
    found: dict[int, list] = {}
    for block in program.block.blocks():
        for op in block.ops:
            for v in op.inputs:
                if v is not None:
                    found.setdefault(id(v), []).append(op)
        for v in block.yields:
            found.setdefault(id(v), []).append(block)
    return found


def sole_reader(value, readers: dict[int, list]) -> Operation | None:
    """The one op reading ``value`` (``readers`` from :func:`users`), else None: what a pass checks
    before it folds a value into its reader and drops the op making it."""
    found = readers.get(id(value), [])
    return found[0] if len(found) == 1 and isinstance(found[0], Operation) else None


def producer(value) -> Operation | None:
    """The op defining ``value`` (None for a block argument)."""
    return value.owner if isinstance(value.owner, Operation) else None


def is_param(value, program: Program, ctx: PassContext) -> bool:
    """A weight the context allows passes to treat as a constant."""
    op = producer(value)
    return op is not None and op.name == "param" and ctx.foldable(op.attrs["name"])


def known_array(value, program: Program, ctx: PassContext):
    """The array a ``constant`` or a foldable weight holds, else None: what a pass may compute with."""
    op = producer(value)
    if op is None:
        return None
    if op.name == "constant":
        return op.attrs["value"]
    if is_param(value, program, ctx):
        return program.weights[op.attrs["name"]]
    return None


def unit_stride_padding(conv: Operation) -> tuple[int, ...] | None:
    """A conv2d's explicit (top, bottom, left, right) padding where it is NCHW, single-group, stride 1
    and undilated with a 4-D weight (what the conv-rewriting passes start from), else None."""
    a = conv.attrs
    plain = a.get("data_format", "NCHW") == "NCHW" and a.get("groups", 1) == 1
    geometry = tuple(a.get("stride", ())) == (1, 1) and tuple(a.get("dilation", ())) == (1, 1)
    padding = a.get("padding")
    explicit = isinstance(padding, list | tuple) and len(padding) == 4 and all(isinstance(p, int) for p in padding)
    return tuple(padding) if plain and geometry and explicit and len(conv.inputs[1].shape) == 4 else None


def add_param(program: Program, block: Block, index: int, base: str, array) -> Operation:
    """A new weight ``array`` under a fresh name, as a ``param`` op inserted at ``index``."""
    value = program.new_value(array.shape, array.dtype, name=base)
    while value.name in program.weights:
        value = program.new_value(array.shape, array.dtype, name=base)
    array.flags.writeable = False
    program.weights[value.name] = array
    return block.insert(index, Operation("param", [], [value], {"name": value.name}))
