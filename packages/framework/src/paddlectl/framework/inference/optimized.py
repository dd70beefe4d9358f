"""What a predictor runs: the saved program after the pass pipeline, its executor (shared by
predictor clones), compile report and memory plans.

``Config.switch_ir_optim(False)`` runs the program as saved; otherwise every pass runs except
those ``Config.delete_pass`` named (Paddle's pass names are accepted too). The memory plan is
made once per input shape (per binding of the symbolic dims) when asked for: at load time for a
fixed-shape (re-specialised) model, at the first ``predictor.memory_plan(shapes)`` otherwise, which
answers before anything runs. Runs do not wait for it (it was ~6 ms of each new shape's planning
for PP-OCRv6's recogniser, which sees a new line width at nearly every call).
"""

from __future__ import annotations

import threading

import numpy as np

from ..compiler.report import CompileReport
from ..static.executor import Executor, bind_inputs
from ..static.ir import Program
from ..static.passes import OptimizeResult, PassManager
from ..static.passes.memory_plan import MemoryPlan
from .batch_split import BatchSplit


class OptimizedModel:
    """The optimised program and its executor (both shared read-only by predictor clones) and reports.
    With a memory plan, or ``memory_optim``, each result is freed after its last use."""

    def __init__(self, program: Program, result: OptimizeResult | None, memory_optim: bool = False) -> None:
        self.result = result
        self.program = result.program if result is not None else program
        self._plans: dict[tuple, MemoryPlan] = {}
        self._lock = threading.Lock()
        free_dead = memory_optim or self.planner is not None
        self.executor = Executor(self.program, free_dead=free_dead)
        self.batch_split = BatchSplit(self.program, self.executor)

    @classmethod
    def optimize(
        cls, program: Program, ir_optim: bool, disabled=(), memory_optim: bool = False, threads: int = 1
    ) -> OptimizedModel:
        """``program`` through the pass pipeline (unless ``ir_optim`` is off) for ``threads`` threads."""
        result = PassManager(disabled=disabled, threads=threads).run(program) if ir_optim else None
        return cls(program, result, memory_optim)

    @property
    def planner(self):
        return self.result.memory if self.result is not None else None

    def compile_report(self) -> CompileReport:
        """The fusion report (empty when fuse_elementwise is off or passes are switched off)."""
        report = self.result.compile_report if self.result is not None else None
        return report if report is not None else CompileReport()

    def bindings_for(self, shapes) -> dict[str, int]:
        """Symbol sizes from input shapes (a list in input order, or {name: shape}), checked like feeds."""
        names = self.program.input_names
        if isinstance(shapes, dict):
            unknown = sorted(set(shapes) - set(names))
            if unknown or len(shapes) != len(names):
                raise ValueError(f"memory_plan: give one shape per input {names}, got {sorted(shapes)}")
            shapes = [shapes[n] for n in names]
        probes = [
            np.broadcast_to(np.zeros((), v.dtype), tuple(int(d) for d in s))
            for v, s in zip(self.program.inputs, shapes, strict=True)
        ]
        return bind_inputs(self.program, probes)

    def plan(self, bindings: dict[str, int]) -> MemoryPlan | None:
        """The plan for these input dims (made once per binding); None when memory_plan is off."""
        planner = self.planner
        if planner is None:
            return None
        if planner.static is not None:
            return planner.static
        key = tuple(sorted((k, v) for k, v in bindings.items() if k in planner.symbols))
        with self._lock:
            if key not in self._plans:
                self._plans[key] = planner.plan(dict(key))
            return self._plans[key]
