"""Mixed precision against FP32: the Transformer encoder step of train_step.py, and digits accuracy.

Each precision mode runs in its own child process (peak RSS is its own), interleaved over
``--rounds``, and the middle run is shown: ms/step, peak RSS, and the activation memory the tape
holds for backward after the forward (tracemalloc over NumPy's allocations). Then the digits
config trains to the end once per mode through ``paddlectl train``'s trainer and the final
accuracy is compared with FP32's (goal: within 0.5 points).

    python benchmarks/amp.py [--steps 20] [--rounds 3] [--no-digits] [--json out.json]

On a CPU the 16-bit kernels compute in float32 and round (README, "Mixed precision"): the memory
is saved, the time is not.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _rounds import middle, ms_text, ratio_text  # benchmarks/, on sys.path when run as a script

MODES = {
    "fp32": {},
    "O1 bfloat16": {"level": "O1", "dtype": "bfloat16"},
    "O1 float16": {"level": "O1", "dtype": "float16"},
    "O2 bfloat16": {"level": "O2", "dtype": "bfloat16"},
}


def _encoder_step(paddle, mode: dict):
    """train_step.py's transformer workload (d_model 256, 4 heads, FFN 1024, batch 16 x 64 tokens),
    its step under ``mode``; the step returns the bytes the tape holds after the forward."""
    import numpy as np

    rng = np.random.default_rng(0)
    nn = paddle.nn
    model = nn.Sequential(nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1), nn.Linear(256, 10))
    opt = paddle.optimizer.AdamW(learning_rate=1e-3, parameters=model.parameters())
    if mode.get("level") == "O2":
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype=mode["dtype"])
    scaler = paddle.amp.GradScaler(enable=mode.get("dtype") == "float16", init_loss_scaling=1024.0)
    x = paddle.to_tensor(rng.standard_normal((16, 64, 256)).astype("float32"))
    y = paddle.to_tensor(rng.integers(0, 10, (16, 64, 1)))
    loss_fn = nn.CrossEntropyLoss()

    def step(trace: bool) -> int:
        cast = paddle.amp.auto_cast(**mode) if mode else contextlib.nullcontext()
        if trace:
            tracemalloc.start()
        with cast:
            loss = loss_fn(model(x), y)
        held = tracemalloc.get_traced_memory()[0] if trace else 0
        if trace:
            tracemalloc.stop()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        return held

    return step


def worker(mode_name: str, steps: int) -> dict:
    import paddlectl.framework as paddle

    step = _encoder_step(paddle, MODES[mode_name])
    for _ in range(3):
        step(False)
    held = step(True)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step(False)
        times.append((time.perf_counter() - t0) * 1e3)
    return {
        "median_ms": statistics.median(times),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "held_mb": held / 2**20,
    }


def _run(mode_name: str, steps: int) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", mode_name, "--steps", str(steps)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def digits_accuracy(mode: dict, out: Path) -> dict:
    """The digits config trained to the end with ``mode`` as Global.amp/amp_dtype overrides."""
    from paddlectl.framework.config import load_config
    from paddlectl.framework.hapi.trainer import train
    from paddlectl.framework.vision.task import ClsTask

    config = Path(__file__).parents[1] / "packages/framework/src/paddlectl/framework/vision/configs/digits_lenet.yml"
    overrides = [f"Global.output_dir={out}"]
    if mode:
        overrides += [f"Global.amp={mode['level']}", f"Global.amp_dtype={mode['dtype']}"]
    t0 = time.perf_counter()
    result = train(ClsTask(), load_config(config, overrides))
    return {**result.last_eval, "train_s": time.perf_counter() - t0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=1, metavar="MODE")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-digits", action="store_true", help="skip the digits training runs")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.steps)))
        return
    from rich.console import Console
    from rich.table import Table

    runs: dict[str, list] = {m: [] for m in MODES}
    for _ in range(args.rounds):  # interleaved: a slow spell of the machine hits every mode alike
        for mode in MODES:
            runs[mode].append(_run(mode, args.steps))
    results = {mode: middle(rs) for mode, rs in runs.items()}
    if not args.no_digits:
        with tempfile.TemporaryDirectory(prefix="bench-amp-") as tmp:
            for mode, settings in MODES.items():
                results[mode]["digits"] = digits_accuracy(settings, Path(tmp) / mode.replace(" ", "_"))
    base = results["fp32"]
    table = Table(
        title=f"Transformer encoder training step by precision (median of {args.steps}; middle of {args.rounds})"
    )
    for col in (
        "mode",
        "ms/step (rounds)",
        "vs fp32 (per round)",
        "held for backward MB",
        "vs fp32 ",
        "peak RSS MB",
        "digits acc",
        "acc - fp32",
    ):
        table.add_column(col, justify="left" if col == "mode" else "right")
    for mode, r in results.items():
        if "error" in r:
            table.add_row(mode, "error: " + r["error"][:70], *[""] * 6)
            continue
        acc = r.get("digits", {}).get("acc")
        table.add_row(
            mode,
            ms_text(r),
            ratio_text(r, base),
            f"{r['held_mb']:.1f}",
            f"{r['held_mb'] / base['held_mb']:.2f}x",
            f"{r['peak_rss_mb']:.0f}",
            "-" if acc is None else f"{acc:.4f}",
            "-" if acc is None else f"{(acc - base['digits']['acc']) * 100:+.2f} pt",
        )
    Console().print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
