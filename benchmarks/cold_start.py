"""Cold start (issue 31): the first load and run of a model in a new process with empty kernel caches,
as a user meets it right after ``pip install``, against onnxruntime's, and the same process again once
the caches are warm.

Cases: PP-OCRv4 det at 640x320 (W x H), rec on 6 crops at 48x320, cls on 6 at 48x192 (the models in
``rapidocr-onnxruntime``). Each round is fresh processes with an empty ``NUMBA_CACHE_DIR`` and
``PADDLECTL_KERNEL_CACHE``:

- "background" (our default): kernels compile in a worker process while the first runs use NumPy
  references (``kernels.background``); the process then waits for the worker, which is timed too;
- "foreground" (``PADDLECTL_BACKGROUND_COMPILE=0``, what every run did before): each kernel compiles
  at its first call;
- "warm": a new process over the caches the background round left;
- onnxruntime: import, session, first run.

NumPy is imported first, as scripts do. Every process gets a bytecode cache (a temporary
``PYTHONPYCACHEPREFIX``, filled by one unmeasured import, whatever PYTHONDONTWRITEBYTECODE says), as
a pip-installed package has its .pyc files: without them each process compiles every module of the
framework again (~0.45 s of its import here). Times are the process's own clock from its start: import
(NumPy, then the engine), create (predictor / session), first run, and their total; "second run" is
the run after, which on a cold cache is still a reference run. Rounds run interleaved; the middle
round (by total) is shown with the range over rounds.

``--predict-model DIR --predict-input PATH...`` also times ``paddlectl predict`` end to end (a
subprocess, wall clock) cold and warm, e.g. on ``nox -s demo``'s ``output/demo/model``.

    python benchmarks/cold_start.py [--cases det,rec,cls] [--rounds 3] [--foreground-rounds 1] [--json out.json]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sections import row, run  # noqa: E402

CASES = {
    "det": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 320, 640)),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", (6, 3, 48, 320)),
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (6, 3, 48, 192)),
}
COLD_GOAL_S = 2.0

_CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np
engine, path, shape, wait = sys.argv[1], sys.argv[2], tuple(json.loads(sys.argv[3])), sys.argv[4] == "wait"
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
if engine == "ours":
    from paddlectl.framework import inference
    from paddlectl.framework.kernels import background
    imported = time.perf_counter()
    predictor = inference.create_predictor(inference.Config(path))
    created = time.perf_counter()
    predictor.run([x])
    first = time.perf_counter()
    predictor.run([x])
    second = time.perf_counter()
    extra = {"references": background.STATS.references, "submitted": background.STATS.submitted}
    if wait:
        background.wait(900)
        extra["worker_s"] = time.perf_counter() - second
else:
    import onnxruntime as ort
    imported = time.perf_counter()
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    created = time.perf_counter()
    session.run(None, {name: x})
    first = time.perf_counter()
    session.run(None, {name: x})
    second = time.perf_counter()
    extra = {}
print(json.dumps({"import": imported - start, "create": created - imported, "first": first - created,
                  "second": second - first, "total": first - start, **extra}))
"""


def _models() -> Path:
    import rapidocr_onnxruntime

    return Path(rapidocr_onnxruntime.__file__).parent / "models"


_PYCACHE = Path(tempfile.mkdtemp(prefix="paddlectl_cold_pyc_"))


def _environment(caches: Path, **extra) -> dict:
    """Empty kernel caches under ``caches``, the run's shared bytecode cache."""
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(caches / "numba"),
        "PADDLECTL_KERNEL_CACHE": str(caches / "kernels"),
        "PYTHONPYCACHEPREFIX": str(_PYCACHE),
        **extra,
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _fill_bytecode_cache() -> None:
    imports = "import numpy, onnxruntime, paddlectl.framework.inference, paddlectl.cli.app"
    subprocess.run([sys.executable, "-c", imports], env=_environment(_PYCACHE), check=True, timeout=600)


def _child(engine: str, model: Path, shape, caches: Path, background: bool, wait: bool) -> dict:
    env = _environment(caches, PADDLECTL_BACKGROUND_COMPILE="1" if background else "0")
    args = [sys.executable, "-c", _CHILD, engine, str(model), json.dumps(shape), "wait" if wait else "no"]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{engine} {model.name}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _middle(results: list[dict]) -> tuple[dict, str]:
    ordered = sorted(results, key=lambda r: r["total"])
    totals = [r["total"] for r in results]
    spread = f" ({min(totals):.2f}-{max(totals):.2f})" if len(totals) > 1 else ""
    return ordered[len(ordered) // 2], spread


def _parts(r: dict) -> str:
    return f"import {r['import']:.2f} + create {r['create']:.2f} + first run {r['first']:.2f}; second run {r['second']:.3f}"


def _models_section(args) -> list:
    models = _models()
    _fill_bytecode_cache()
    rows = []
    for case in [c for c in args.cases.split(",") if c]:
        file, shape = CASES[case]
        model = models / file
        runs: dict[str, list[dict]] = {"background": [], "warm": [], "foreground": [], "onnxruntime": []}
        for k in range(args.rounds):
            caches = Path(tempfile.mkdtemp(prefix="paddlectl_cold_"))
            try:
                runs["background"].append(_child("ours", model, shape, caches, True, True))
                runs["warm"].append(_child("ours", model, shape, caches, True, False))
                shutil.rmtree(caches, ignore_errors=True)
                if k < args.foreground_rounds:
                    runs["foreground"].append(_child("ours", model, shape, caches, False, False))
                runs["onnxruntime"].append(_child("ort", model, shape, caches, True, False))
            finally:
                shutil.rmtree(caches, ignore_errors=True)
        section = f"{case} {'x'.join(map(str, shape))}"
        peer, _ = _middle(runs["onnxruntime"])
        for setup, results in runs.items():
            if not results:
                continue
            middle, spread = _middle(results)
            cold = setup in ("background", "foreground")
            goal = f"< {COLD_GOAL_S:.0f} s" if setup == "background" else ""
            ok = middle["total"] < COLD_GOAL_S if setup == "background" else None
            label = {"background": "cold, background compile (default)", "foreground": "cold, compile at first call",
                     "warm": "new process, warm caches", "onnxruntime": "onnxruntime, new process"}[setup]  # fmt: skip
            rows.append(row(section, f"{label}: total s", f"{middle['total']:.2f}{spread}", goal, ok))
            rows.append(row(section, f"{label}: parts", _parts(middle)))
            if setup != "onnxruntime":
                rows.append(row(section, f"{label}: total vs onnxruntime", f"{middle['total'] / peer['total']:.1f}x"))
            if cold and "worker_s" in middle:
                rows.append(row(section, f"{label}: worker done after s", f"{middle['worker_s']:.1f}"))
    return rows


def _predict_section(args) -> list:
    if not args.predict_model:
        return [
            row(
                "predict",
                "skipped",
                "pass --predict-model DIR --predict-input PATH... (nox -s demo writes output/demo/model)",
            )
        ]
    rows = []
    caches = Path(tempfile.mkdtemp(prefix="paddlectl_cold_"))
    out = caches / "predictions.json"
    command = ["paddlectl", "predict", "-m", args.predict_model, "-i", *args.predict_input, "--json", str(out)]
    env = _environment(caches)
    _fill_bytecode_cache()
    try:
        for label in ("cold", "warm"):
            start = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
            seconds = time.perf_counter() - start
            if done.returncode != 0:
                raise RuntimeError(f"paddlectl predict failed: {done.stderr[-500:]}")
            goal = f"< {COLD_GOAL_S:.0f} s"
            rows.append(
                row(
                    "predict", f"paddlectl predict end to end, {label} s", f"{seconds:.2f}", goal, seconds < COLD_GOAL_S
                )
            )
            if label == "cold":
                _wait_for_workers()  # the worker fills the cache after the command has answered
    finally:
        shutil.rmtree(caches, ignore_errors=True)
    return rows


def _wait_for_workers(timeout: float = 900) -> None:
    """Until no background compiler process is left (they outlive the command that started them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for proc in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                busy |= b"kernels.compile_worker" in proc.read_bytes()
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.5)


def _add_arguments(parser) -> None:
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--rounds", type=int, default=3, help="rounds of background, warm and onnxruntime")
    parser.add_argument("--foreground-rounds", type=int, default=1, help="rounds of compile-at-first-call (slow)")
    parser.add_argument("--predict-model", help="an exported model for `paddlectl predict`")
    parser.add_argument("--predict-input", nargs="*", default=[], help="its inputs")


if __name__ == "__main__":
    import atexit

    atexit.register(shutil.rmtree, _PYCACHE, True)
    run(
        "Cold start: paddlectl vs onnxruntime, empty kernel caches",
        __doc__,
        {"models": _models_section, "predict": _predict_section},
        _add_arguments,
    )
