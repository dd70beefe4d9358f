"""Program passes (constant folding, batch-norm folding, CSE, DCE, elementwise fusion, memory
planning) and the manager that runs them by name, verifying after each."""

from .base import Pass, PassContext
from .manager import ALIASES, DEFAULT_PIPELINE, PASSES, OptimizeResult, PassManager, PassRecord, optimize, resolve
from .memory_plan import MemoryPlan, MemoryPlanner

__all__ = [
    "ALIASES", "DEFAULT_PIPELINE", "MemoryPlan", "MemoryPlanner", "OptimizeResult", "PASSES", "Pass", "PassContext",
    "PassManager", "PassRecord", "optimize", "resolve",
]  # fmt: skip
