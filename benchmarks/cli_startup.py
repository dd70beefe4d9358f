"""Start-up time of the ``paddlectl`` command: each command a fresh process, as a user runs it.

The root ``--help`` and ``--version`` import no framework and no plugin (goal: under 0.5 s); a
command's own ``--help`` imports that command only (goal: under 1.5 s). Each command runs
``--repeat`` times after one unmeasured run (which warms the OS file cache, not the interpreter);
the table shows the median and the slowest run, beside a bare interpreter's start-up, and the
median CPU time (user + system) of the process, which other load on the machine barely changes.
The runs get a bytecode cache (in a temporary folder, whatever PYTHONDONTWRITEBYTECODE says), as
every pip-installed package has one: without it each start compiles every module again.

    python benchmarks/cli_startup.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, entry_points, version

from rich.console import Console
from rich.table import Table

ROOT_GOAL_S = 0.5
COMMAND_GOAL_S = 1.5
CASES = [
    (("--help",), ROOT_GOAL_S),
    (("--version",), ROOT_GOAL_S),
    (("train", "--help"), COMMAND_GOAL_S),
    (("predict", "--help"), COMMAND_GOAL_S),
    (("compat", "--help"), COMMAND_GOAL_S),
    (("license", "--help"), COMMAND_GOAL_S),
    (("eval", "--help"), COMMAND_GOAL_S),
]


def _command() -> list[str]:
    """The console script beside this interpreter (what a user types), else ``python -m paddlectl.cli``."""
    script = shutil.which("paddlectl", path=os.path.dirname(sys.executable))
    return [script] if script else [sys.executable, "-m", "paddlectl.cli"]


def _time(argv: list[str], repeat: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds of ``repeat`` fresh runs of ``argv``."""
    subprocess.run(argv, capture_output=True, env=env, check=True)  # warms the file cache
    wall, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=True)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="Measured runs per command.")
    args = parser.parse_args()
    try:
        version("paddlectl")
    except PackageNotFoundError:
        print("cli_startup: skipped, the paddlectl CLI is not installed here; pip install -e packages/cli")
        return
    base = _command()
    pycache = tempfile.mkdtemp(prefix="cli_startup_pycache_")
    env = {**os.environ, "COLUMNS": "100", "PYTHONPYCACHEPREFIX": pycache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    plugins = {ep.name for ep in entry_points(group="paddlectl.commands")}
    table = Table(
        title=f"paddlectl start-up, fresh process each run (median of {args.repeat}, os.cpu_count()={os.cpu_count()})"
    )
    for column in ("command", "median s", "slowest s", "CPU s", "goal s", "met"):
        table.add_column(column, justify="left" if column == "command" else "right")
    wall, cpu = _time([sys.executable, "-c", "pass"], args.repeat, env)
    table.add_row("python -c pass (interpreter alone)", f"{statistics.median(wall):.3f}", f"{max(wall):.3f}",
                  f"{statistics.median(cpu):.3f}", "", "")  # fmt: skip
    for case, goal in CASES:
        if case[0] in ("compat", "license", "eval") and case[0] not in plugins:
            table.add_row(" ".join(("paddlectl", *case)), "not installed", "", "", "", "")
            continue
        wall, cpu = _time([*base, *case], args.repeat, env)
        median = statistics.median(wall)
        met = "[green]yes[/]" if median < goal else "[red]no[/]"
        table.add_row(" ".join(("paddlectl", *case)), f"{median:.3f}", f"{max(wall):.3f}",
                      f"{statistics.median(cpu):.3f}", f"{goal:.1f}", met)  # fmt: skip
    shutil.rmtree(pycache, ignore_errors=True)
    Console().print(table)


if __name__ == "__main__":
    main()
