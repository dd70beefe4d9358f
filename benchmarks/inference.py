"""Inference benchmark: paddlectl's Predictor vs PyTorch eager vs PaddlePaddle's inference predictor.

One invocation measures every (framework, workload) pair in its own child process (so peak RSS
is the workload's own), all three with the same weights and thread count, and prints one table:
median and p95 latency, throughput, achieved GFLOP/s (FLOPs counted from the program by each
op's record) against NumPy's own float32 matmul GFLOP/s measured in the same run, peak RSS, the
first load (paddlectl: passes + fused-kernel compile with empty kernel and Numba caches) and the
warm-cache load (predictor creation + first run, the framework's import excluded and reported
in the JSON), and each framework's largest output difference from paddlectl's eager model. Each
pair runs ``--rounds`` times, interleaved with the other frameworks, and the run with the middle
median is shown (the first run's first load). Each framework then runs once more beside a busy
neighbour (one other process spinning on a core): "busy/idle" shows how well its threads step
aside (the goal: within 1.5x of idle).

* paddlectl: ``jit.save`` then ``inference.create_predictor`` (all passes on);
* PyTorch: the same architectures written in torch (``torch.no_grad``), weights copied over;
* PaddlePaddle: the same weights in ``paddle.vision``/``paddle.nn`` models, ``paddle.jit.save``
  then ``paddle.inference.create_predictor``.

Workloads: LeNet at batch 1 and 64, ResNet18 at batch 1 and 16 (3x64x64), a 2-layer
TransformerEncoder (d_model 256, 4 heads, sequence 64) at batch 1.

    python benchmarks/inference.py [--threads N] [--seconds 3] [--rounds 3] [--workloads lenet-b1,...] [--json out.json]

On this workplace's machines OPENBLAS_CORETYPE pins NumPy's OpenBLAS to an old kernel; run it as
``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/inference.py``. The table title
names the BLAS kernel NumPy actually used (threadpoolctl).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _blas import describe as blas
from _blas import matmul_gflops as numpy_matmul_gflops
from _neighbour import busy_neighbour  # benchmarks/, on sys.path when run as a script
from _rounds import middle, ms_text, ratio_text

START = time.perf_counter()
WORKLOADS = {  # name: (model, input shape)
    "lenet-b1": ("lenet", (1, 1, 28, 28)),
    "lenet-b64": ("lenet", (64, 1, 28, 28)),
    "resnet18-b1": ("resnet18", (1, 3, 64, 64)),
    "resnet18-b16": ("resnet18", (16, 3, 64, 64)),
    "encoder-b1": ("encoder", (1, 64, 32)),
}
SPECS = {"lenet": [None, 1, 28, 28], "resnet18": [None, 3, None, None], "encoder": [None, None, 32]}
FRAMEWORKS = ["paddlectl", "torch", "paddle"]


# ----- models --------------------------------------------------------------------------------------


def paddle_api_model(paddle, model: str):
    """The model in a Paddle-API framework (paddlectl or PaddlePaddle): same classes, same names."""
    if model == "lenet":
        return paddle.vision.models.LeNet()
    if model == "resnet18":
        return paddle.vision.models.resnet18(num_classes=10)
    nn = paddle.nn

    class Encoder(nn.Layer):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(32, 256)
            self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0), 2)
            self.head = nn.Linear(256, 10)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)))

    return Encoder()


def torch_model(model: str, weights: dict):
    """The same architecture in torch, with Paddle-layout weights copied in (Linear weights transposed)."""
    import numpy as np
    import torch

    nn = torch.nn
    if model == "lenet":
        net = nn.Sequential(
            nn.Sequential(
                nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
                nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2, 2),
            ),
            nn.Flatten(),
            nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)),
        )  # fmt: skip
        rename = {"features.": "0.", "fc.": "2."}
    elif model == "resnet18":
        net = _torch_resnet18(nn)
        rename = {}
    else:
        net = _torch_encoder(nn)
        rename = {}
    state = {}
    for key, value in weights.items():
        for a, b in rename.items():
            key = key.replace(a, b, 1) if key.startswith(a) else key
        key = key.replace("._mean", ".running_mean").replace("._variance", ".running_var")
        state[key] = value
    if model == "encoder":
        state = _encoder_state(state, np)
    target = net.state_dict()
    for key, value in list(state.items()):
        if key in target and value.ndim == 2 and tuple(target[key].shape) == value.T.shape and "proj" not in key:
            state[key] = value.T  # Paddle's Linear weight is [in, out], torch's [out, in]
    missing = set(target) - set(state) - {k for k in target if k.endswith("num_batches_tracked")}
    if missing:
        raise KeyError(f"torch {model}: no weights for {sorted(missing)[:5]}")
    net.load_state_dict(
        {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items() if k in target}, strict=False
    )
    return net.eval()


def _torch_resnet18(nn):
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + (self.downsample(x) if self.downsample is not None else x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
            for i, (cin, cout, stride) in enumerate(widths, 1):
                setattr(self, f"layer{i}", nn.Sequential(Block(cin, cout, stride), Block(cout, cout, 1)))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, 10)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet18()


def _torch_encoder(nn):
    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(32, 256)
            layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(256, 10)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)))

    return Encoder()


def _encoder_state(state: dict, np) -> dict:
    """Paddle's separate q/k/v projections ([in, out]) -> torch's packed in_proj ([3*out, in])."""
    out = {}
    for key, value in state.items():
        if ".self_attn." not in key:
            out[key] = value
            continue
        prefix, rest = key.split(".self_attn.")
        proj, kind = rest.split(".")
        if proj == "out_proj":
            out[f"{prefix}.self_attn.out_proj.{kind}"] = value.T if kind == "weight" else value
    for prefix in {k.split(".self_attn.")[0] for k in state if ".self_attn." in k}:
        for kind in ("weight", "bias"):
            parts = [state[f"{prefix}.self_attn.{p}_proj.{kind}"] for p in "qkv"]
            out[f"{prefix}.self_attn.in_proj_{kind}"] = np.concatenate(
                [p.T for p in parts] if kind == "weight" else parts
            )
    return out


# ----- FLOPs ---------------------------------------------------------------------------------------


def program_flop_count(program, bindings: dict) -> int:
    """FLOPs (2 per multiply-add) of the program at these input sizes, from each op's record."""
    from paddlectl.framework.hapi.flop_counts import program_flops

    return 2 * program_flops(program, bindings)


# ----- one measurement (child process) ------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child
    would report at least its parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


MAX_SAMPLES = 2000
"""Timed runs per worker at most (within ``--seconds``): a sub-millisecond model gets a median over
a second or so of runs, not over the first few milliseconds after warm-up."""


def _timed_runs(run, seconds: float) -> list[float]:
    for _ in range(2):
        run()
    times = []
    deadline = time.perf_counter() + seconds
    while len(times) < 5 or (time.perf_counter() < deadline and len(times) < MAX_SAMPLES):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def worker(framework: str, workload: str, workdir: str, threads: int, seconds: float) -> dict:
    import numpy as np

    model, shape = WORKLOADS[workload]
    x = np.load(os.path.join(workdir, f"{workload}.input.npy"))
    expected = np.load(os.path.join(workdir, f"{model}.expected.{workload}.npy"))
    with np.load(os.path.join(workdir, f"{model}.weights.npz"), allow_pickle=False) as f:
        weights = dict(f)
    extra: dict = {}
    t_import = time.perf_counter()
    __import__({"paddlectl": "paddlectl.framework", "torch": "torch", "paddle": "paddle"}[framework])
    import_s = time.perf_counter() - t_import
    t_load = time.perf_counter()  # load = model/predictor creation + first run, imports excluded
    if framework == "paddlectl":
        from paddlectl.framework import inference

        config = inference.Config(os.path.join(workdir, f"{model}.paddlectl"))
        config.set_cpu_math_library_num_threads(threads)
        predictor = inference.create_predictor(config)
        report = predictor.compile_report()
        extra = {
            "fused_groups": report.groups_formed,
            "kernels_compiled": report.compiled,
            "kernel_cache_hits": report.cache_hits,
            "planned_bytes": predictor.planned_bytes([shape]),
            "fc_ops": [op.name for op in predictor.optimized_program.walk()].count("fc"),
        }

        def run():
            return predictor.run([x])[0]

    elif framework == "torch":
        import torch

        torch.set_num_threads(threads)
        net = torch_model(model, weights)
        xt = torch.from_numpy(x)

        def run():
            with torch.no_grad():
                return net(xt).numpy()

    else:
        import paddle

        paddle.set_device("cpu")
        path = os.path.join(workdir, f"{model}.paddle", "model")
        if not os.path.exists(path + ".pdiparams"):
            layer = paddle_api_model(paddle, model)
            layer.set_state_dict({k: paddle.to_tensor(v) for k, v in weights.items()})
            layer.eval()
            spec = [paddle.static.InputSpec(SPECS[model], "float32", "x")]
            paddle.jit.save(layer, path, input_spec=spec)
        t_load = time.perf_counter()
        model_file = path + (".json" if os.path.exists(path + ".json") else ".pdmodel")
        config = paddle.inference.Config(model_file, path + ".pdiparams")
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(threads)
        predictor = paddle.inference.create_predictor(config)
        handle = predictor.get_input_handle(predictor.get_input_names()[0])
        output = predictor.get_output_handle(predictor.get_output_names()[0])

        def run():
            handle.reshape(x.shape)
            handle.copy_from_cpu(x)
            predictor.run()
            return output.copy_to_cpu()

    out = run()
    load_s = time.perf_counter() - t_load
    if framework == "paddlectl":  # on a cold cache: time the compiled kernels, not their NumPy references
        from paddlectl.framework.kernels import background

        background.wait(900)
    times = _timed_runs(run, seconds)
    return {
        "median_ms": statistics.median(times),
        "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))],
        "runs": len(times),
        "peak_rss_mb": peak_rss_mb(),
        "load_s": load_s,
        "import_s": import_s,
        "max_abs_diff": float(np.abs(np.asarray(out, np.float64) - expected).max()),
        **extra,
    }


def _child(framework, workload, workdir, threads, seconds, env) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", framework, workload, workdir, "--threads", str(threads),
         "--seconds", str(seconds)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ----- the run (parent) ---------------------------------------------------------------------------


def prepare(workdir: str, workloads: list[str]) -> dict:
    """Each model once (fixed seed, non-trivial BatchNorm statistics): paddlectl export, weights,
    inputs, the eager outputs every framework is compared with, and FLOPs per workload."""
    import numpy as np

    import paddlectl.framework as paddle
    from paddlectl.framework import jit
    from paddlectl.framework.jit import InputSpec

    flops = {}
    rng = np.random.default_rng(0)
    for model in sorted({WORKLOADS[w][0] for w in workloads}):
        paddle.seed(0)
        layer = paddle_api_model(paddle, model)
        state = {k: v.numpy() for k, v in layer.state_dict().items()}
        for key in state:
            if key.endswith("._mean"):
                state[key] = rng.normal(0, 0.1, state[key].shape).astype("float32")
            elif key.endswith("._variance"):
                state[key] = rng.uniform(0.5, 1.5, state[key].shape).astype("float32")
        layer.set_state_dict(state)
        layer.eval()
        np.savez(os.path.join(workdir, f"{model}.weights.npz"), **state)
        path = os.path.join(workdir, f"{model}.paddlectl")
        jit.save(layer, path, input_spec=[InputSpec(SPECS[model], "float32", "x")])
        program = jit.load(path).program
        for workload in [w for w in workloads if WORKLOADS[w][0] == model]:
            shape = WORKLOADS[workload][1]
            x = rng.standard_normal(shape).astype("float32")
            np.save(os.path.join(workdir, f"{workload}.input.npy"), x)
            with paddle.no_grad():
                expected = layer(paddle.to_tensor(x)).numpy()
            np.save(os.path.join(workdir, f"{model}.expected.{workload}.npy"), expected)
            bindings = {"N": shape[0], "H": shape[-2], "W": shape[-1], "L": shape[1]}
            flops[workload] = program_flop_count(program, bindings)
    return flops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, metavar=("FRAMEWORK", "WORKLOAD", "WORKDIR"))
    parser.add_argument("--numpy-reference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help="threads per framework (predictor, BLAS, torch)")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed runs per pair (at least 5)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs per framework, interleaved; the middle one is shown"
    )
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, args.threads, args.seconds)))
        return
    if args.numpy_reference:
        print(json.dumps({"gflops": numpy_matmul_gflops(), "blas": blas()}))
        return
    from rich.console import Console
    from rich.table import Table

    workloads = args.workloads.split(",")
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    workdir = tempfile.mkdtemp(prefix="bench-inference-")
    results = {}
    try:
        flops = prepare(workdir, workloads)
        caches = {
            "PADDLECTL_KERNEL_CACHE": os.path.join(workdir, "kernels"),
            "NUMBA_CACHE_DIR": os.path.join(workdir, "numba"),
        }
        threads = str(args.threads)  # every framework's BLAS gets the same thread count as its own pool
        env = dict(os.environ, **caches, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        reference = subprocess.run(
            [sys.executable, __file__, "--numpy-reference"], capture_output=True, text=True, env=env, check=True
        )  # NumPy's matmul with the children's BLAS threads
        numpy_ref = json.loads(reference.stdout.strip().splitlines()[-1])
        numpy_gflops = numpy_ref["gflops"]
        for workload in workloads:
            runs: dict[str, list] = {f: [] for f in FRAMEWORKS}
            for _ in range(args.rounds):  # interleaved, so a slow spell hits every framework alike
                for framework in FRAMEWORKS:
                    runs[framework].append(_child(framework, workload, workdir, args.threads, args.seconds, env))
            for framework, rs in runs.items():
                results[(framework, workload)] = middle(rs, first=("load_s",))
            warm = _child("paddlectl", workload, workdir, args.threads, 0.0, env)  # same caches, now warm
            results[("paddlectl", workload)]["warm_load_s"] = warm.get("load_s")
            with busy_neighbour():
                for framework in FRAMEWORKS:
                    busy = _child(framework, workload, workdir, args.threads, args.seconds, env)
                    results[(framework, workload)]["busy_ms"] = busy.get("median_ms")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    title = (
        f"inference, {args.threads} thread(s) per framework, NumPy BLAS: {numpy_ref['blas']}; NumPy float32 1024^3 matmul: "
        f"{numpy_gflops:.1f} GFLOP/s; the middle of {args.rounds} interleaved runs per framework"
    )
    table = Table(title=title)
    columns = (
        "workload", "framework", "median ms (rounds)", "p95 ms", "samples/s", "vs torch (per round)", "GFLOP/s", "% NumPy mm",
        "peak RSS MB", "first load s", "warm load s", "max |diff|", "busy ms", "busy/idle",
    )  # fmt: skip
    for col in columns:
        table.add_column(col, justify="left" if col in ("workload", "framework") else "right")
    for workload in workloads:
        batch = WORKLOADS[workload][1][0]
        torch_r = results[("torch", workload)]
        torch_ms = torch_r.get("median_ms")
        for framework in FRAMEWORKS:
            r = results[(framework, workload)]
            if "error" in r:
                table.add_row(workload, framework, "error: " + r["error"][:80], *[""] * (len(columns) - 3))
                continue
            gflops = flops[workload] / (r["median_ms"] / 1e3) / 1e9
            warm, busy = r.get("warm_load_s"), r.get("busy_ms")
            table.add_row(
                workload, framework, ms_text(r, 2), f"{r['p95_ms']:.2f}",
                f"{batch / (r['median_ms'] / 1e3):.0f}", ratio_text(r, torch_r) if torch_ms else "-",
                f"{gflops:.1f}", f"{100 * gflops / numpy_gflops:.0f}%", f"{r['peak_rss_mb']:.0f}",
                f"{r['load_s']:.2f}", f"{warm:.2f}" if warm is not None else "-", f"{r['max_abs_diff']:.1e}",
                f"{busy:.2f}" if busy else "-", f"{busy / r['median_ms']:.2f}x" if busy else "-",
            )  # fmt: skip
    console = Console(width=200)
    console.print(table)
    for workload in workloads:
        r = results[("paddlectl", workload)]
        if "fused_groups" in r:
            console.print(
                f"{workload}: {flops[workload] / 1e9:.3f} GFLOP per run; paddlectl fused {r['fused_groups']} groups "
                f"({r['kernels_compiled']} kernels compiled on first load, {r['kernel_cache_hits']} cache hits), "
                f"{r['fc_ops']} fc ops (packed-weight GEMMs), planned intermediates {r['planned_bytes'] / 2**20:.2f} MiB"
            )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({f"{f}/{w}": r for (f, w), r in results.items()} | {"numpy": numpy_ref}, handle, indent=2)


if __name__ == "__main__":
    main()
