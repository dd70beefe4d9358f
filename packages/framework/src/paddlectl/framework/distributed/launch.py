"""``paddlectl launch``: start N ranks of a script under ``mpiexec`` and report how the job ended.

Every rank runs ``rank_main`` around the script. A rank whose script raises writes a one-line
report (``rank-R.json``) into the job's directory and calls ``MPI_Abort``, which makes ``mpiexec``
end every other rank at once, so a failure never leaves a rank waiting in a collective. A rank
killed from outside (a signal) is found in Hydra's "BAD TERMINATION" notice by its PID, which each
rank records at start. The launcher then names the failed rank and its error.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..kernels.cores import physical_cores
from .rank_main import JOB_DIR_VARIABLE

_HOST = re.compile(r"^[A-Za-z0-9._:-]+$")
_RULE = re.compile(r"^=+$")
_HYDRA_START = "=   BAD TERMINATION"
_HYDRA_PID = re.compile(r"^=\s+PID (\d+) RUNNING AT")
_HYDRA_CODE = re.compile(r"^=\s+(?:EXIT CODE|KILLED BY SIGNAL): (\d+)")


@dataclass
class Outcome:
    """How a job ended: ``code`` 0 ok, 1 a rank failed, 2 a rank's input was wrong; ``failures``
    the one-line reports, rank by rank."""

    code: int
    failures: list[str]


def mpiexec() -> str:
    """The ``mpiexec`` of the ``mpich`` wheel beside this Python, else one on PATH."""
    beside = Path(sys.executable).with_name("mpiexec")
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        raise ConfigError(
            "no mpiexec found; install the MPI engine with: pip install 'paddlectl-framework[distributed]'"
        )
    return found


def command(target: list[str], nproc: int, hosts: list[str] | None = None) -> list[str]:
    """The mpiexec command line that runs ``target`` (``script.py args`` or ``-m module args``)."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise ConfigError(f"--nproc must be a positive number of processes, got {nproc!r}")
    if not target:
        raise ConfigError("nothing to launch: name a script (paddlectl launch --nproc 2 train.py)")
    if target[0] != "-m" and not Path(target[0]).is_file():
        raise ConfigError(f"script {target[0]!r} does not exist")
    bad = [h for h in hosts or () if not _HOST.match(h)]
    if bad:  # every argument is checked before looking for the MPI engine
        raise ConfigError(f"--hosts: {bad[0]!r} is not a host name; pass names separated by commas (h1,h2)")
    line = [mpiexec(), "-n", str(nproc)] + (["-hosts", ",".join(hosts)] if hosts else [])
    return [*line, sys.executable, "-m", "paddlectl.framework.distributed.rank_main", *target]


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
"""The thread counts of a rank's pools: OpenMP (Numba's threading layer), OpenBLAS and Numba."""


def rank_environment(nproc: int, hosts: list[str] | None, environ) -> dict[str, str]:
    """The ranks' environment: on this machine alone (no ``hosts``), each rank's thread counts are its
    share of the physical cores (at least one) unless set. Left to their defaults, N ranks each start
    a thread per core, and every parallel region waits for threads the oversubscribed cores have
    descheduled: the README's CRNN on 2 cores trained at 66 samples/s with ``--nproc 2``, 150 with a
    thread a rank, against 106 in one process."""
    env = dict(environ)
    if not hosts:
        share = str(max(1, physical_cores() // nproc))
        for name in THREAD_VARIABLES:
            env.setdefault(name, share)
    return env


def run(target: list[str], nproc: int, hosts: list[str] | None = None, echo=print) -> Outcome:
    """Run the job to its end, relaying its output; Hydra's failure notice is replaced by ours."""
    line = command(target, nproc, hosts)
    with tempfile.TemporaryDirectory(prefix="paddlectl-launch-") as job_dir:
        env = {**rank_environment(nproc, hosts, os.environ), JOB_DIR_VARIABLE: job_dir}
        process = subprocess.Popen(line, stdout=subprocess.PIPE, stderr=None, env=env, text=True, bufsize=1)
        hydra = relay(process.stdout, echo)
        code = process.wait()
        return _outcome(code, Path(job_dir), hydra)


def relay(lines, echo) -> list[str]:
    """Echo the ranks' output; return Hydra's failure notice (a rule of '=' then "BAD TERMINATION",
    to the end), which is not echoed. A rank's own line of '=' is echoed."""
    hydra: list[str] = []
    held = None  # a rule that may open the notice
    for text in lines:
        if hydra:
            hydra.append(text)
            continue
        if held is not None:
            if text.startswith(_HYDRA_START):
                hydra += [held, text]
                held = None
                continue
            echo(held.rstrip("\n"))
            held = None
        if _RULE.match(text.rstrip("\n")):
            held = text
        else:
            echo(text.rstrip("\n"))
    if held is not None:
        echo(held.rstrip("\n"))
    return hydra


def _outcome(code: int, job_dir: Path, hydra: list[str]) -> Outcome:
    reports = sorted(job_dir.glob("rank-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    records = [json.loads(p.read_text()) for p in reports]
    if records:
        failures = [f"rank {r['rank']} failed: {r['error']}" for r in records]
        return Outcome(2 if all(r["usage"] for r in records) else 1, failures)
    if code == 0 and not hydra:
        return Outcome(0, [])
    pids = {int(p.read_text()): int(p.stem.split("-")[1]) for p in job_dir.glob("rank-*.pid")}
    pid = next((int(m.group(1)) for t in hydra if (m := _HYDRA_PID.match(t))), None)
    how = next((int(m.group(1)) for t in hydra if (m := _HYDRA_CODE.match(t))), code)
    who = f"rank {pids[pid]}" if pid in pids else "a rank"
    return Outcome(1, [f"{who} died (exit code or signal {how}) without a Python error; the job was stopped"])
