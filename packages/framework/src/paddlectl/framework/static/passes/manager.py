"""The pass manager: named passes run in a fixed order on a copy of the program, the verifier after
each, any pass switched off by name.

``PassManager(disabled=["fuse_elementwise"]).run(program)`` returns an :class:`OptimizeResult`: the
rewritten copy (the caller's program and weights are never touched), one record per pass (ran or
skipped, ops changed, seconds), the compiler's report and the memory planner. Paddle's own pass
names are accepted as aliases, so ``config.delete_pass("conv_bn_fuse_pass")`` works as in Paddle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..executor import specialize
from ..ir import Program
from ..parser import parse_program
from ..printer import print_program
from ..verifier import VerifyError, verify
from .attention import fuse_attention
from .base import Pass, PassContext
from .constant_fold import constant_fold
from .cse import cse
from .dce import dce
from .fc import fuse_fc
from .fold_batchnorm import fold_batchnorm
from .fusion import fuse_elementwise
from .memory_plan import memory_plan
from .scale_fold import fold_channel_scale
from .winograd import winograd

PASSES: dict[str, Pass] = {
    p.name: p
    for p in (
        Pass("constant_fold", constant_fold, "run ops whose inputs are all constants/weights once, at load time"),
        Pass("fold_batchnorm", fold_batchnorm, "fold inference batch_norm into the conv2d / matmul(+add) before it"),
        Pass("cse", cse, "merge ops equal to an earlier one (same op, inputs and attrs)"),
        Pass("dce", dce, "drop ops whose results nothing reads, and unreferenced weights"),
        Pass("fuse_attention", fuse_attention, "multi-head attention as one op; projections of one input as one GEMM"),
        Pass("fuse_fc", fuse_fc, "matmul by a known weight (+ bias, relu) as one packed-weight kernel (one thread)"),
        Pass("fuse_elementwise", fuse_elementwise, "fuse elementwise chains into one generated Numba kernel each"),
        Pass("winograd", winograd, "give 3x3 stride-1 convs their Winograd-transformed filters (F(2x2, 3x3))"),
        Pass(
            "fold_channel_scale", fold_channel_scale, "scale a 1x1 conv's weights per image, not its input (SE gates)"
        ),
        Pass("memory_plan", memory_plan, "plan intermediate buffers by liveness (reuse), peak known before a run"),
    )
}
"""Every pass, in pipeline order."""

ALIASES = {
    "conv_bn_fuse_pass": "fold_batchnorm",
    "conv_eltwiseadd_bn_fuse_pass": "fold_batchnorm",
    "fc_bn_fuse_pass": "fold_batchnorm",
    "constant_folding_pass": "constant_fold",
    "common_subexpression_elimination_pass": "cse",
    "dead_code_elimination_pass": "dce",
    "fused_elementwise_pass": "fuse_elementwise",
    "memory_optimize_pass": "memory_plan",
    "self_attention_fuse_pass": "fuse_attention",
    "multihead_matmul_fuse_pass_v2": "fuse_attention",
    "fc_fuse_pass": "fuse_fc",
}
"""Paddle's pass names for the same jobs."""

DEFAULT_PIPELINE = (
    "constant_fold", "fold_batchnorm", "cse", "dce", "fuse_attention", "fuse_fc", "fuse_elementwise", "winograd",
    "fold_channel_scale", "memory_plan",
)  # fmt: skip


def resolve(name: str) -> str:
    """A pass name (or Paddle alias) -> our pass name; ValueError naming the known ones."""
    name = ALIASES.get(name, name)
    if name not in PASSES:
        raise ValueError(
            f"unknown pass {name!r}; the passes are {list(PASSES)} (Paddle names accepted: {sorted(ALIASES)})"
        )
    return name


@dataclass
class PassRecord:
    name: str
    ran: bool
    changed: int = 0
    seconds: float = 0.0


@dataclass
class OptimizeResult:
    program: Program
    records: list[PassRecord] = field(default_factory=list)
    context: PassContext = field(default_factory=PassContext)
    cached_in: str | None = None  # the optimisation-cache entry this result was read from

    @property
    def compile_report(self):
        return self.context.compile_report

    @property
    def memory(self):
        return self.context.memory

    def summary(self) -> str:
        rows = [
            f"  {r.name:<17} {'ran' if r.ran else 'off':<4} changed {r.changed:<4} {r.seconds * 1e3:8.1f} ms"
            for r in self.records
        ]
        head = "passes:" if self.cached_in is None else f"passes (read from the optimisation cache {self.cached_in}):"
        return "\n".join([head, *rows])


class PassManager:
    """Runs ``pipeline`` minus ``disabled`` (names or Paddle aliases) on a copy of a program, for a
    predictor of ``threads`` threads."""

    def __init__(self, pipeline=DEFAULT_PIPELINE, disabled=(), foldable=None, threads: int = 1) -> None:
        self.pipeline = [resolve(n) for n in pipeline]
        self.disabled = {resolve(n) for n in disabled}
        self.foldable = foldable
        self.threads = threads

    def run(self, program: Program, bindings: dict | None = None) -> OptimizeResult:
        """Optimise a copy of ``program``; ``bindings`` first fix symbolic dims to sizes."""
        work = (
            specialize(program, bindings) if bindings else parse_program(print_program(program), dict(program.weights))
        )
        ctx = PassContext(threads=self.threads)
        if self.foldable is not None:
            ctx.foldable = self.foldable
        result = OptimizeResult(work, context=ctx)
        for name in self.pipeline:
            if name in self.disabled:
                result.records.append(PassRecord(name, ran=False))
                continue
            start = time.perf_counter()
            changed = PASSES[name].run(work, ctx)
            try:
                if changed:  # a pass that rewrote nothing leaves the program verified as it was
                    verify(work)
            except VerifyError as exc:
                raise VerifyError(f"after pass {name!r}: {exc}; switch it off with delete_pass({name!r})") from None
            result.records.append(PassRecord(name, True, changed, time.perf_counter() - start))
        return result


def optimize(program: Program, disabled=(), bindings: dict | None = None) -> OptimizeResult:
    """The default pipeline without ``disabled``: ``PassManager(disabled=...).run(program)``."""
    return PassManager(disabled=disabled).run(program, bindings)
