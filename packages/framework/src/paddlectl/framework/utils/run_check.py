"""``paddle.utils.run_check()``: prove that this machine can run paddlectl.

The decisive question is whether Numba can JIT-compile a kernel here and
cache it on disk so the next process loads it instead of compiling again;
that is checked in fresh child processes, exactly as a user's second run sees it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

_PROBE_MODULE = textwrap.dedent(
    """
    import json
    import numpy as np
    from numba import njit

    @njit(cache=True)
    def axpy(a, x, y):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = a * x[i] + y[i]
        return out

    x = np.arange(4.0)
    result = axpy(2.0, x, x).tolist()
    print(json.dumps({
        "result": result,
        "compiled": len(getattr(axpy, "signatures", [])) > 0,
        "cache_hits": sum(axpy.stats.cache_hits.values()) if hasattr(axpy, "stats") else 0,
    }))
    """
)


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


def _run_probe(workdir: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    proc = subprocess.run(
        [sys.executable, "-c", "import numba_probe"],
        cwd=workdir,
        env={**env, "PYTHONPATH": str(workdir)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(last)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_numba(cache_dir: str | os.PathLike | None = None) -> list[CheckResult]:
    """Compile a kernel in one process and load it from the on-disk cache in a second one."""
    with tempfile.TemporaryDirectory(prefix="paddlectl-run-check-") as tmp:
        workdir = Path(tmp)
        (workdir / "numba_probe.py").write_text(_PROBE_MODULE)
        cache = Path(cache_dir) if cache_dir else workdir / "numba-cache"
        try:
            first = _run_probe(workdir, cache)
        except Exception as exc:  # noqa: BLE001 - every failure is a finding to report
            return [CheckResult("numba jit", False, f"compiling a kernel failed: {exc}")]
        expected = [0.0, 3.0, 6.0, 9.0]
        if not first["compiled"] or first["result"] != expected:
            return [
                CheckResult(
                    "numba jit",
                    False,
                    "the kernel ran as plain Python or gave a wrong result "
                    f"({first['result']} != {expected}); is NUMBA_DISABLE_JIT set?",
                )
            ]
        jit = CheckResult("numba jit", True, "compiled and ran a kernel")
        try:
            second = _run_probe(workdir, cache)
        except Exception as exc:  # noqa: BLE001
            return [jit, CheckResult("numba cache", False, f"second process failed: {exc}")]
        if second["cache_hits"] < 1:
            return [
                jit,
                CheckResult(
                    "numba cache",
                    False,
                    f"the second process compiled again instead of loading {cache}; "
                    "make NUMBA_CACHE_DIR point at a writable directory",
                ),
            ]
        return [jit, CheckResult("numba cache", True, f"second process loaded the kernel from {cache}")]


def check_training(steps: int = 20) -> CheckResult:
    """Train a small regression for a few steps, as Paddle's run_check does: the loss must fall."""
    # Imported here: low-level modules (kernels, config) import utils.fileio, which runs this
    # package's __init__ and so this module; the layers above must not load with them.
    import numpy as np

    from .. import nn, optimizer
    from ..nn import functional as F
    from ..ops.creation import to_tensor

    try:
        rng = np.random.default_rng(0)
        x = to_tensor(rng.standard_normal((32, 8)).astype("float32"))
        y = to_tensor((rng.standard_normal((32, 8)) @ rng.standard_normal((8, 1))).astype("float32"))
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        opt = optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
        losses = []
        for _ in range(steps):
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
    except Exception as exc:  # noqa: BLE001 - every failure is a finding to report
        return CheckResult("training", False, f"a training step failed: {type(exc).__name__}: {exc}")
    if not losses[-1] < losses[0]:
        return CheckResult("training", False, f"the loss did not fall ({losses[0]:.4f} -> {losses[-1]:.4f})")
    return CheckResult("training", True, f"{steps} Adam steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}")


def run_check() -> bool:
    """Print whether paddlectl works here, as ``paddle.utils.run_check()`` does; True when it does."""
    print("Running verify paddlectl program ...")
    results = [*check_numba(), check_training()]
    for result in results:
        print(f"  [{'ok' if result.ok else 'FAILED'}] {result.name}: {result.detail}")
    ok = all(r.ok for r in results)
    print("paddlectl works well on this CPU." if ok else "paddlectl is not installed correctly, see above.")
    return ok
