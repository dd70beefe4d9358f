"""The per-model compile report: groups formed, ops fused, kernel compile/load times, cache hits
and the bytes of intermediate results the fused kernels no longer materialise."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import symbolic


@dataclass
class GroupRecord:
    ops: list[str]
    body: str
    kernel: str  # the kernel's cache key
    source: str  # compiled | disk | memory
    seconds: float
    saved_bytes: str | int  # int, or a symbolic expression over the input dims
    epilogue_of: str | None = None


@dataclass
class CompileReport:
    groups: list[GroupRecord] = field(default_factory=list)
    cache_dir: str = ""
    skipped: list[str] = field(default_factory=list)  # groups left unfused, with the reason

    @property
    def groups_formed(self) -> int:
        return len(self.groups)

    @property
    def ops_fused(self) -> int:
        return sum(len(g.ops) for g in self.groups)

    @property
    def kernels(self) -> int:
        return len({g.kernel for g in self.groups})

    @property
    def compiled(self) -> int:
        return sum(g.source == "compiled" for g in self.groups)

    @property
    def cache_hits(self) -> int:
        """Kernels found already built: in Numba's disk cache or earlier in this process."""
        return sum(g.source in ("disk", "memory") for g in self.groups)

    @property
    def compile_seconds(self) -> float:
        return sum(g.seconds for g in self.groups)

    def saved_bytes(self, bindings: dict | None = None) -> int | str:
        """Intermediate bytes saved per run; symbolic unless ``bindings`` give every input dim."""
        total = "+".join(f"({g.saved_bytes})" for g in self.groups) or "0"
        total = symbolic.simplify(total)
        if bindings is not None or isinstance(total, int):
            return int(symbolic.evaluate(total, bindings or {}))
        return total

    def as_dict(self) -> dict:
        return {
            "groups_formed": self.groups_formed,
            "ops_fused": self.ops_fused,
            "kernels": self.kernels,
            "compiled": self.compiled,
            "cache_hits": self.cache_hits,
            "compile_seconds": round(self.compile_seconds, 4),
            "saved_bytes": self.saved_bytes(),
            "cache_dir": self.cache_dir,
            "skipped": list(self.skipped),
        }

    def format(self, bindings: dict | None = None) -> str:
        """The report as text; ``bindings`` (input dim sizes) turn the saved bytes into a number."""
        lines = [
            f"fusion: {self.groups_formed} groups, {self.ops_fused} ops fused into {self.kernels} kernels "
            f"({self.compiled} compiled, {self.cache_hits} cache hits, {self.compile_seconds:.3f} s); "
            f"intermediates saved per run: {self.saved_bytes(bindings)} bytes; kernel cache {self.cache_dir}"
        ]
        kinds: dict[tuple, list[GroupRecord]] = {}
        for g in self.groups:
            kinds.setdefault(("+".join(g.ops), g.epilogue_of, g.kernel), []).append(g)
        for (ops, epilogue, key), groups in kinds.items():
            epi = f" as {epilogue} epilogue" if epilogue else ""
            seconds = sum(g.seconds for g in groups)
            how = ", ".join(sorted({g.source for g in groups}))
            lines.append(f"  {len(groups):>3} x {ops}{epi}: kernel {key} ({how}, {seconds * 1e3:.1f} ms)")
        lines += [f"  not fused: {reason}" for reason in self.skipped]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()
