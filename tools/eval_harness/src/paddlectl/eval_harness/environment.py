"""What a result depends on besides the model: package versions, git commit, and the machine.

The machine fingerprint hashes the facts that move latency (CPU model, core count, memory,
OS, Python build); the gate refuses to compare latencies across different fingerprints.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path

TRACKED = ("numpy", "numba", "scipy", "mlflow")


def package_versions() -> dict[str, str]:
    """Every installed paddlectl distribution plus the numeric stack, name -> version."""
    found = {}
    for dist in distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "paddlectl" or name.startswith("paddlectl-"):
            found[name] = dist.version
    for name in TRACKED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return dict(sorted(found.items()))


def git_sha(cwd: Path | None = None) -> str | None:
    """The commit checked out where the evaluation runs (None outside a git work tree)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def machine_facts() -> dict[str, str | int]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
    return {
        "cpu": _cpu_model(),
        "cpus": cpus,
        "memory_gib": round(_memory_bytes() / 2**30),
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release().split('-')[0]}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }


def fingerprint(facts: dict[str, str | int]) -> str:
    """A short stable hash of the machine facts."""
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]
