"""Training-step benchmark: paddlectl vs PyTorch vs PaddlePaddle on the same workloads.

One invocation runs every (framework, workload) pair in its own child process (so peak RSS is
the workload's own) and prints median ms/step, the ratio to PyTorch, peak RSS, and cold start
(process start to the end of the first step) with an empty and a warm Numba cache. Each framework
runs ``--rounds`` times, interleaved with the others, and the run with the middle ms/step is
shown: on a shared 2-core machine a single run of any framework can be 2-4x off. Each framework
then runs once more beside a busy neighbour (one other process spinning on a core): "busy ms"
and "busy/idle" show how well its threads step aside (the goal: within 1.5x of idle). "GFLOP/step"
is one step's matmul and convolution work as PyTorch's FLOP counter sees the same model, and
"roofline ms" that work at NumPy's own 1024^3 float32 matmul rate on this machine (the title), with
each framework's step as a percentage of it: how close a GEMM-bound step is to the machine's GEMM.
Our steps are timed once the kernels its first step sent to the background compiler are built (their
serial twins run meanwhile), as ``inference.py`` and ``onnx_models.py`` time compiled kernels.

    python benchmarks/train_step.py [--steps 30] [--rounds 3] [--json out.json]

Where OPENBLAS_CORETYPE pins NumPy's OpenBLAS to an older kernel (this workplace's machines), run
it as ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/train_step.py``: the table
title names the OpenBLAS kernel NumPy actually used.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _blas import describe, matmul_gflops
from _neighbour import busy_neighbour  # benchmarks/, on sys.path when run as a script
from _rounds import middle, ms_text, ratio_text

START = time.perf_counter()
WORKLOADS = ["lenet", "mlp", "transformer", "lstm"]
FRAMEWORKS = ["paddlectl", "torch", "paddle"]


def _paddle_api_workload(paddle, name: str):
    """Model, optimizer, batch and loss for a Paddle-API framework (ours or the real one)."""
    import numpy as np

    rng = np.random.default_rng(0)
    nn = paddle.nn
    if name == "lenet":
        model = paddle.vision.models.LeNet()
        x = rng.standard_normal((64, 1, 28, 28)).astype("float32")
        y = rng.integers(0, 10, (64, 1))
        opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    elif name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        x = rng.standard_normal((128, 784)).astype("float32")
        y = rng.integers(0, 10, (128, 1))
        opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    elif name == "transformer":
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1)
        head = nn.Linear(256, 10)
        model = nn.Sequential(layer)
        model.add_sublayer("head", head)
        x = rng.standard_normal((16, 64, 256)).astype("float32")
        y = rng.integers(0, 10, (16, 64, 1))
        opt = paddle.optimizer.AdamW(learning_rate=1e-3, parameters=model.parameters())
    else:
        lstm = nn.LSTM(64, 128)
        head = nn.Linear(128, 10)

        class Net(nn.Layer):
            def __init__(self):
                super().__init__()
                self.lstm, self.head = lstm, head

            def forward(self, inp):
                return self.head(self.lstm(inp)[0])

        model = Net()
        x = rng.standard_normal((32, 32, 64)).astype("float32")
        y = rng.integers(0, 10, (32, 32, 1))
        opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = paddle.to_tensor(x), paddle.to_tensor(y)

    def step():
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss

    return step


def _torch_workload(name: str):
    import numpy as np
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    rng = np.random.default_rng(0)
    nn = torch.nn
    if name == "lenet":
        model = nn.Sequential(
            nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 5), nn.ReLU(),
            nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10),
        )  # fmt: skip
        x, y = rng.standard_normal((64, 1, 28, 28)), rng.integers(0, 10, 64)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    elif name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        x, y = rng.standard_normal((128, 784)), rng.integers(0, 10, 128)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
    elif name == "transformer":
        model = nn.Sequential(
            nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1, batch_first=True), nn.Linear(256, 10)
        )
        x, y = rng.standard_normal((16, 64, 256)), rng.integers(0, 10, (16, 64))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    else:

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm, self.head = nn.LSTM(64, 128, batch_first=True), nn.Linear(128, 10)

            def forward(self, inp):
                return self.head(self.lstm(inp)[0])

        model = Net()
        x, y = rng.standard_normal((32, 32, 64)), rng.integers(0, 10, (32, 32))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xt, yt = torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        out = model(xt)
        loss = loss_fn(out.reshape(-1, out.shape[-1]), yt.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return step


def worker(framework: str, workload: str, steps: int) -> dict:
    if framework == "torch":
        step = _torch_workload(workload)
    else:
        module = "paddlectl.framework" if framework == "paddlectl" else "paddle"
        paddle = __import__(module, fromlist=["nn"])
        step = _paddle_api_workload(paddle, workload)
    step()
    first = time.perf_counter() - START
    if framework == "paddlectl":  # on a cold cache: time the compiled kernels, not their serial twins
        from paddlectl.framework.kernels import background

        background.wait(900)
    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "median_ms": statistics.median(times),
        "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))],
        "peak_rss_mb": rss_mb,
        "cold_start_s": first,
    }
    if framework == "torch":
        result["step_gflop"] = _step_gflop(step)
    return result


def _step_gflop(step) -> float:
    """One training step's matmul and convolution FLOPs, forward and backward, as PyTorch's own
    counter (``torch.utils.flop_counter``) sees the same model: what the roofline is computed from."""
    import warnings

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    # oneDNN's fused LSTM is one op the counter has no formula for; the native path is its GEMMs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the flags' notice about Intel GPUs' TF32
        with torch.backends.mkldnn.flags(enabled=False), FlopCounterMode(display=False) as counter:
            step()
    return counter.get_total_flops() / 1e9


def _run(framework: str, workload: str, steps: int, cache_dir: str) -> dict:
    """One worker process. Its Numba and Python bytecode caches live under ``cache_dir`` (empty at
    the first run, warm at the next), and bytecode is written even where PYTHONDONTWRITEBYTECODE is
    set, as on a user's machine: otherwise every start recompiles every module from source."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPYCACHEPREFIX=os.path.join(cache_dir, "pyc"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", framework, workload, "--steps", str(steps)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "WORKLOAD"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--json")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--rounds", type=int, default=3, help="runs per framework; the middle one is shown")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, args.steps)))
        return
    from rich.console import Console
    from rich.table import Table

    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-numba-") as cache:
        for workload in args.workloads.split(","):
            runs: dict[str, list] = {f: [] for f in FRAMEWORKS}
            for _ in range(args.rounds):  # interleaved, so a noisy spell hits every framework alike
                for framework in FRAMEWORKS:
                    runs[framework].append(_run(framework, workload, args.steps, cache))
            for framework, rs in runs.items():
                results[(framework, workload)] = middle(rs, first=("cold_start_s",))
            # Same cache again: the warm-cache cold start of our own code.
            results[("paddlectl-warm", workload)] = _run("paddlectl", workload, 3, cache)
            with busy_neighbour():
                for framework in FRAMEWORKS:
                    results[(framework, workload)]["busy"] = _run(framework, workload, args.steps, cache)
    gemm_rate = matmul_gflops()
    title = (
        f"training step, {os.cpu_count()} cores, NumPy BLAS: {describe()}, its 1024^3 matmul {gemm_rate:.0f} GFLOP/s"
    )
    table = Table(title=f"{title} (median of {args.steps} steps; the middle of {args.rounds} runs)")
    columns = (
        "workload",
        "framework",
        "ms/step (rounds)",
        "p95 ms",
        "vs torch (per round)",
        "peak RSS MB",
        "cold start s",
        "busy ms",
        "busy/idle",
        "GFLOP/step",
        "roofline ms (% of it)",
    )
    for col in columns:
        table.add_column(col, justify="right" if col not in ("workload", "framework") else "left")
    for workload in args.workloads.split(","):
        torch_r = results[("torch", workload)]
        torch_ms = torch_r.get("median_ms")
        gflop = torch_r.get("step_gflop")
        roofline_ms = 1e3 * gflop / gemm_rate if gflop else None
        for framework in [*FRAMEWORKS, "paddlectl-warm"]:
            r = results[(framework, workload)]
            if "error" in r:
                table.add_row(workload, framework, "error: " + r["error"][:60], *[""] * (len(columns) - 3))
                continue
            ratio = ratio_text(r, torch_r) if torch_ms else "-"
            busy = r.get("busy", {}).get("median_ms")
            table.add_row(
                workload,
                framework,
                ms_text(r, 2),
                f"{r['p95_ms']:.2f}",
                ratio,
                f"{r['peak_rss_mb']:.0f}",
                f"{r['cold_start_s']:.2f}",
                f"{busy:.2f}" if busy else "-",
                f"{busy / r['median_ms']:.2f}x" if busy else "-",
                f"{gflop:.3f}" if gflop else "-",
                f"{roofline_ms:.2f} ({100 * roofline_ms / r['median_ms']:.0f}%)" if roofline_ms else "-",
            )
    Console().print(table)
    if args.json:
        with open(args.json, "w") as handle:
            rows = {f"{f}/{w}": r for (f, w), r in results.items()}
            json.dump({"numpy_gemm_gflops": gemm_rate, **rows}, handle, indent=2)


if __name__ == "__main__":
    main()
