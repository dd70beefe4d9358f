"""The buffer plan: which intermediate results can share memory, and the peak, before any run.

Liveness over the main block: a result lives from the op that makes it to the last op reading it
(a read inside a ``cond``/``while`` body counts at that op; program outputs live to the end). A
fused op writing over its input (``inplace``) takes that input's buffer. Buffers are then handed
out greedily in program order: at each op the results whose last reader has finished return
their buffer to the pool, and each new result takes the smallest free buffer big enough, else
the largest free one (grown), else a new one. ``planned_bytes`` is the sum of the buffers: with
reuse, the most intermediate memory one run needs; ``naive_bytes`` is what keeping every
intermediate would cost; ``peak_live_bytes`` the largest live set at any op (a lower bound).

Sizes may be symbolic (a batch dim ``N``): the planner keeps the liveness and plans per binding
of the input dims (:meth:`MemoryPlanner.plan`), so a model re-specialised to a fixed shape is
re-planned, and a fixed-shape program is planned at load time (``MemoryPlanner.static``).
Feeds, weights and constants are not intermediates and are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...compiler.fused_op import fused_elementwise_op
from ...core import symbolic
from ..ir import SOURCE_OPS, Program, last_uses


@dataclass
class Interval:
    name: str
    start: int
    end: int
    shape: tuple
    itemsize: int
    alias_of: str | None = None

    def nbytes(self, bindings: dict) -> int:
        return int(np.prod([symbolic.evaluate(d, bindings) if isinstance(d, str) else d for d in self.shape])) * (
            self.itemsize
        )


@dataclass
class MemoryPlan:
    bindings: dict
    buffers: list[int] = field(default_factory=list)
    assignment: dict[str, int] = field(default_factory=dict)
    naive_bytes: int = 0
    peak_live_bytes: int = 0

    @property
    def planned_bytes(self) -> int:
        return sum(self.buffers)

    def __str__(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items())) or "fixed shapes"
        return (
            f"memory plan ({dims}): {len(self.assignment)} intermediates in {len(self.buffers)} buffers, "
            f"planned {self.planned_bytes} bytes (without reuse {self.naive_bytes}, peak live {self.peak_live_bytes})"
        )


class MemoryPlanner:
    """Liveness of a program's intermediates; ``plan(bindings)`` assigns buffers for one input shape."""

    def __init__(self, program: Program) -> None:
        block = program.block
        last = last_uses(block)
        bound = {s for v in program.inputs for d in v.shape if isinstance(d, str) for s in symbolic.symbols(d)}
        self.intervals: list[Interval] = []
        by_value: dict[int, Interval] = {}
        for i, op in enumerate(block.ops):
            if op.name in SOURCE_OPS:
                continue
            for v in op.outputs:
                if any(isinstance(d, str) and not symbolic.symbols(d) <= bound for d in v.shape):
                    continue  # a data-dependent size (nonzero's, NMS's count): allocated when it runs
                interval = Interval(v.name, i, last.get(id(v), i), v.shape, v.dtype.itemsize)
                target = op.attrs.get("inplace") if op.name == fused_elementwise_op.name else None
                if target is not None and id(op.inputs[target]) in by_value:
                    host = by_value[id(op.inputs[target])]
                    while host.alias_of is not None:
                        host = next(h for h in self.intervals if h.name == host.alias_of)
                    if host.end == i:  # the input dies here: the result takes over its buffer
                        host.end = interval.end
                        interval.alias_of = host.name
                by_value[id(v)] = interval
                self.intervals.append(interval)
        self.symbols = sorted(
            {s for iv in self.intervals for d in iv.shape if isinstance(d, str) for s in symbolic.symbols(d)}
        )
        self.static = self.plan({}) if not self.symbols else None

    def plan(self, bindings: dict) -> MemoryPlan:
        missing = [s for s in self.symbols if s not in bindings]
        if missing:
            raise ValueError(f"memory plan: give sizes for the input dims {missing} (e.g. from the feed shapes)")
        plan = MemoryPlan(dict(bindings))
        owners = [iv for iv in self.intervals if iv.alias_of is None]
        sizes = {iv.name: iv.nbytes(bindings) for iv in self.intervals}
        plan.naive_bytes = sum(sizes.values())
        free: list[int] = []
        ending: dict[int, list[int]] = {}
        cursor = 0
        for iv in owners:  # already in start order
            while cursor < iv.start:  # results whose last reader finished before this op release
                for b in ending.pop(cursor, []):
                    free.append(b)
                cursor += 1
            need = sizes[iv.name]
            fits = [b for b in free if plan.buffers[b] >= need]
            if fits:
                b = min(fits, key=lambda k: plan.buffers[k])
            elif free:
                b = max(free, key=lambda k: plan.buffers[k])
                plan.buffers[b] = need
            else:
                b = len(plan.buffers)
                plan.buffers.append(need)
            if b in free:
                free.remove(b)
            plan.assignment[iv.name] = b
            ending.setdefault(iv.end, []).append(b)
        for iv in self.intervals:
            if iv.alias_of is not None:
                plan.assignment[iv.name] = plan.assignment[iv.alias_of]
        events = max((iv.end for iv in owners), default=0) + 1
        live = [0] * (events + 1)
        for iv in owners:
            live[iv.start] += sizes[iv.name]
            live[iv.end + 1] -= sizes[iv.name]
        running = 0
        for delta in live:
            running += delta
            plan.peak_live_bytes = max(plan.peak_live_bytes, running)
        return plan


def memory_plan(program: Program, ctx) -> int:
    ctx.memory = MemoryPlanner(program)
    return 0
