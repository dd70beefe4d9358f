"""Cold start: a fresh Python process, from exec to its first prediction.

The parent saves one pre-processed input to an ``.npz``, notes the wall clock, and starts
``python -m paddlectl.eval_harness.coldstart MODEL INPUTS THREADS``; the child reports the wall
clock right after its first prediction (same machine, same clock), plus its import, model load
and first-run times.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .errors import EvalHarnessError
from .threads import child_env


def measure(
    model_path: Path, inputs: list[np.ndarray], threads: int | None = None, timeout_s: float = 300.0
) -> dict[str, float]:
    """Seconds from process start to first prediction (``total_s``), plus the child's breakdown."""
    with tempfile.TemporaryDirectory() as tmp:
        npz = Path(tmp) / "inputs.npz"
        np.savez(npz, *inputs)
        start = time.time()
        child = subprocess.Popen(
            [sys.executable, "-m", "paddlectl.eval_harness.coldstart", str(model_path), str(npz), str(threads or 0)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **child_env(threads)},
        )  # fmt: skip
        try:
            out, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            raise EvalHarnessError(
                f"cold-start process did not finish in {timeout_s:.0f} s; set Eval.harness.cold_start=false"
            ) from None
    if child.returncode != 0 or not out.strip():
        raise EvalHarnessError(f"cold-start process failed (exit {child.returncode}): {err.strip()[-500:]}")
    child_report = json.loads(out.strip().splitlines()[-1])
    done_at = child_report.pop("done_at")
    return {"total_s": done_at - start, **child_report}


def _main(model_path: str, npz_path: str, threads: str) -> None:
    t0 = time.perf_counter()
    from .predictor import open_predictor

    t1 = time.perf_counter()
    runner = open_predictor(Path(model_path), int(threads) or None)
    t2 = time.perf_counter()
    with np.load(npz_path) as data:
        inputs = [data[f"arr_{i}"] for i in range(len(data.files))]
    t3 = time.perf_counter()
    runner.run(inputs)
    t4 = time.perf_counter()
    done_at = time.time()
    report = {"import_s": t1 - t0, "load_s": t2 - t1, "first_run_s": t4 - t3, "done_at": done_at}
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    _main(*sys.argv[1:4])
