"""One rank of a ``paddlectl launch`` job: ``python -m ...rank_main script.py args`` (or ``-m module
args``) under mpiexec.

The script runs as ``python script.py`` would. If it raises (or exits non-zero), this rank writes
its one-line report for the launcher and calls ``MPI_Abort``: a plain exit would wait in
``MPI_Finalize`` for ranks that are themselves waiting for this one, and the job would hang.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from pathlib import Path

from ..errors import PaddlectlError

JOB_DIR_VARIABLE = "PADDLECTL_LAUNCH_DIR"
"""Where the launcher collects the ranks' PIDs and failure reports."""


def _where(exc: BaseException, script: str) -> str:
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == os.path.abspath(script)
    ]
    return f"{script}:{frames[-1].lineno}: " if frames else ""


def _report(rank: int, error: str, usage: bool) -> None:
    """For the launcher, or on stderr when mpiexec was run by hand."""
    job_dir = os.environ.get(JOB_DIR_VARIABLE)
    if not job_dir:
        print(f"rank {rank} failed: {error}", file=sys.stderr, flush=True)
        return
    staged = Path(job_dir) / f".rank-{rank}.json"
    staged.write_text(json.dumps({"rank": rank, "error": error, "usage": usage}))
    staged.rename(staged.with_name(f"rank-{rank}.json"))


def _abort(code: int) -> None:
    if "mpi4py.MPI" in sys.modules:
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv: list[str]) -> None:
    from ..io.world import env_rank

    rank = env_rank()
    job_dir = os.environ.get(JOB_DIR_VARIABLE)
    if job_dir:
        (Path(job_dir) / f"rank-{rank}.pid").write_text(str(os.getpid()))
    module = argv[0] == "-m"
    target = argv[1] if module else argv[0]
    sys.argv = argv[1:] if module else list(argv)
    if not module:
        sys.path[0] = str(Path(target).resolve().parent)
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _report(rank, f"exited with {exc.code!r}", usage=exc.code == 2)
            _abort(exc.code if isinstance(exc.code, int) else 1)
    except BaseException as exc:  # noqa: BLE001 - any failure of the user's script ends the whole job
        _report(rank, f"{_where(exc, target)}{type(exc).__name__}: {exc}", usage=isinstance(exc, PaddlectlError))
        _abort(2 if isinstance(exc, PaddlectlError) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
