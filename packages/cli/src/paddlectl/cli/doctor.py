"""``paddlectl doctor``: what this machine is, and whether paddlectl can run on it."""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import dataclass

import typer
from rich.table import Table

from .output import console, err_console, escape
from .plugins import installed_paddlectl

MIN_PYTHON = (3, 11)


@dataclass(frozen=True)
class Finding:
    name: str
    status: str  # "ok", "warn" (works, with a limitation) or "fail" (broken)
    detail: str


def _python() -> Finding:
    version = platform.python_version()
    ok = sys.version_info[:2] >= MIN_PYTHON
    need = ".".join(map(str, MIN_PYTHON))
    return Finding("python", "ok" if ok else "fail", version if ok else f"{version}; paddlectl needs Python >= {need}")


def _cpu() -> Finding:
    try:
        import llvmlite.binding as llvm

        features = llvm.get_host_cpu_features().flatten().split(",")
        wanted = ("avx", "avx2", "fma", "avx512f", "neon", "sve")
        present = sorted(f[1:] for f in features if f.startswith("+") and f[1:] in wanted)
        name = llvm.get_host_cpu_name()
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        return Finding("cpu", "warn", f"could not read CPU features: {exc}")
    cores = os.cpu_count() or 1
    return Finding("cpu", "ok", f"{name}, {cores} cores, SIMD: {' '.join(present) or 'none'}")


def _version_of(module: str) -> Finding:
    try:
        mod = __import__(module)
    except Exception as exc:  # noqa: BLE001
        return Finding(module, "fail", f"cannot import {module}: {exc}; reinstall paddlectl-framework")
    return Finding(module, "ok", mod.__version__)


def _mpi() -> Finding:
    try:
        from mpi4py import MPI
    except ImportError:
        return Finding(
            "mpi",
            "warn",
            "mpi4py not installed: distributed training is off; pip install 'paddlectl-framework[distributed]'",
        )
    except Exception as exc:  # noqa: BLE001 - a broken MPI library is a finding
        return Finding("mpi", "fail", f"mpi4py is installed but MPI failed to load: {exc}")
    return Finding("mpi", "ok", MPI.Get_library_version().splitlines()[0].strip())


def _from_check(result) -> Finding:
    return Finding(result.name, "ok" if result.ok else "fail", result.detail)


def diagnose() -> list[Finding]:
    """Every finding, in the order a user reads them."""
    from paddlectl.framework.utils.run_check import check_numba, check_training

    findings = [
        _python(),
        Finding("os", "ok", f"{platform.system()} {platform.release()} ({platform.machine()})"),
        _cpu(),
        _version_of("numpy"),
        _version_of("numba"),
    ]
    findings += [_from_check(r) for r in (*check_numba(), check_training())]
    findings.append(_mpi())
    packages = installed_paddlectl()
    findings.append(Finding("paddlectl", "ok", ", ".join(f"{n} {v}" for n, v in packages.items())))
    return findings


STATUS_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


def doctor_command(
    json_out: str | None = typer.Option(None, "--json", help="Also write the findings to this JSON file."),
) -> None:
    """Check this machine: Python, OS, CPU, numpy/numba, Numba JIT and cache, MPI, paddlectl packages."""
    with console.status("checking this machine (compiling a Numba kernel twice)..."):
        findings = diagnose()
    table = Table(title="paddlectl doctor")
    for column in ("check", "status", "detail"):
        table.add_column(column)
    for f in findings:
        table.add_row(escape(f.name), STATUS_STYLE[f.status], escape(f.detail))
    console.print(table)
    if json_out:
        from paddlectl.framework.utils.fileio import atomic_write

        with atomic_write(json_out, "w", encoding="utf-8") as handle:
            json.dump([f.__dict__ for f in findings], handle, indent=2)
    broken = [f for f in findings if f.status == "fail"]
    if broken:
        err_console.print(f"[red]broken:[/] {escape('; '.join(f'{f.name}: {f.detail}' for f in broken))}")
        raise typer.Exit(1)
    console.print("[green]paddlectl works on this machine.[/]")
