"""PP-OCR and model-zoo ONNX models: paddlectl's predictor (the model imported from ONNX) vs onnxruntime.

Run it here as::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/onnx_models.py [--cases "det 640x320,rec 6x48x320"] [--setups default] [--rounds 3] [--runs N]

(the environment pins OpenBLAS to a core type that is not this machine's; unsetting them lets
OpenBLAS pick its own kernel, which is printed below via threadpoolctl).

Cases: PP-OCRv4 det at 640x320, 736x736 and 960x544 (W x H), rec on a batch of 6 crops at 48x320,
cls on a batch of 6 at 48x192; ResNet-50 and DenseNet-121 (the model-zoo classics shipped in the onnx
wheel, opset 9) at batch 1 and 8 on 224x224. The zoo files hold every op and shape of the real
models but constant-filled weights (0.02 everywhere), so each weight is re-drawn, seeded
(``zoo_model``): conv and fully-connected kernels He-normal (std sqrt(2 / fan_in)), per-channel
scales, variances, shifts and means around their neutral 1 or 0 (He-normal has no fan-in there;
the scale that ends a residual branch around 0.2), so activations keep a realistic, finite scale
through every layer. Each case runs in two setups: "default", what a user gets without
tuning (onnxruntime's default SessionOptions, our Config without a thread count), and "2 threads"
(onnxruntime ``intra_op_num_threads=2``, ours ``set_cpu_math_library_num_threads(2)``); passes on.
NumPy is imported before paddlectl, as most scripts do. Each engine, setup and case runs in a fresh
subprocess, so "first" (import/session creation + first run: ONNX parsing,
our passes and kernel compilation or cache load) and peak RSS are that process's own; "warm load"
is a second predictor/session built in the same process, then its first run. Latency: median and
p95 over the timed runs after one warm-up; each engine runs each case ``ROUNDS`` times, interleaved
with the other, and the run with the middle median is shown. The ratio is ours over onnxruntime's
in the same setup. The last table splits our warm run by op type: that is
where our time goes.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from _rounds import middle, ms_text, ratio_text  # benchmarks/, on sys.path when run as a script

CASES = {
    "det 640x320": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 320, 640), 10),
    "det 736x736": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 736, 736), 8),
    "det 960x544": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 544, 960), 8),
    "rec 6x48x320": ("ch_PP-OCRv4_rec_infer.onnx", (6, 3, 48, 320), 15),
    "cls 6x48x192": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (6, 3, 48, 192), 30),
    "resnet50 b1": ("zoo:resnet50", (1, 3, 224, 224), 15),
    "resnet50 b8": ("zoo:resnet50", (8, 3, 224, 224), 6),
    "densenet121 b1": ("zoo:densenet121", (1, 3, 224, 224), 15),
    "densenet121 b8": ("zoo:densenet121", (8, 3, 224, 224), 6),
}
SETUPS = {"default": None, "2 threads": 2}  # setup: threads (None: the engine's own default)
ROUNDS = 3
ZOO_SEED = 0


def _model_path(name: str, batch: int) -> str:
    if name.startswith("zoo:"):
        return zoo_model(name.removeprefix("zoo:"), batch)
    import rapidocr_onnxruntime

    return os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models", name)


def zoo_model(name: str, batch: int) -> str:
    """The path of model-zoo classic ``name`` with re-drawn weights (``realistic_weights``) at batch
    ``batch``, written once per seed into the temp dir (every worker process reads the same file)."""
    path = os.path.join(tempfile.gettempdir(), f"paddlectl_bench_{name}_b{batch}_seed{ZOO_SEED}.onnx")
    if not os.path.exists(path):
        import onnx

        from paddlectl.framework.onnx.conformance import zoo_models

        (source,) = [p for p in zoo_models() if os.path.basename(p) == f"light_{name}.onnx"]
        model = realistic_weights(onnx.load(source), batch, np.random.default_rng(ZOO_SEED))
        partial = f"{path}.{os.getpid()}"
        onnx.save(model, partial)
        os.replace(partial, path)
    return path


RESIDUAL_SCALE = 0.2
"""The scale of a BatchNormalization that ends a residual branch (its output is summed with the
shortcut): trained ResNets keep these small, and with scales near 1 the sum doubles the variance
at every block (logits in the thousands after 16)."""
_MULTIPLICATIVE = {("BatchNormalization", 1), ("BatchNormalization", 4), ("Mul", 0), ("Mul", 1)}
"""(consumer, input index) of the per-channel values that scale (BN's scale and variance, a Mul):
drawn around 1; the other per-channel values (shifts, means, biases) around 0."""


def realistic_weights(model, batch: int, rng: np.random.Generator):
    """``model`` (a light zoo file: weights made by ConstantOfShape from a shape initializer, or
    constant initializers) with every float weight re-drawn by its role and the batch set to ``batch``."""
    import onnx
    from onnx import helper, numpy_helper

    graph = model.graph
    arrays = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    made = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "ConstantOfShape" and n.input[0] in arrays}
    shapes = {out: tuple(int(d) for d in arrays[shape]) for out, shape in made.items()}
    shapes.update({k: a.shape for k, a in arrays.items() if a.dtype.kind == "f"})
    consumers = collections.defaultdict(list)
    for node in graph.node:
        for k, name in enumerate(node.input):
            consumers[name].append((node, k))

    def role(name: str) -> tuple:
        """(consumer op type, input index, consumer) of a weight, through the Unsqueeze that shapes it."""
        node, k = consumers[name][0] if consumers[name] else (None, -1)
        if node is not None and node.op_type == "Unsqueeze":
            return role(node.output[0])
        return (node.op_type if node is not None else "", k, node)

    weights = {}
    for name, shape in shapes.items():
        op_type, k, node = role(name)
        if len(shape) >= 2:
            transposed = op_type == "Gemm" and not any(a.name == "transB" and a.i for a in node.attribute)
            fan_in = shape[0] if transposed else int(np.prod(shape[1:]))
            weights[name] = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        elif (op_type, k) in _MULTIPLICATIVE:
            joins = (op_type, k) == ("BatchNormalization", 1) and any(
                c.op_type in ("Sum", "Add") for c, _ in consumers[node.output[0]]
            )
            weights[name] = (RESIDUAL_SCALE if joins else 1.0) * (1.0 + 0.1 * np.abs(rng.standard_normal(shape)))
        else:
            weights[name] = 0.1 * rng.standard_normal(shape)
    nodes = [n for n in graph.node if n.output[0] not in made]
    used = {i for n in nodes for i in n.input}
    for node in nodes:  # a Reshape target that fixes batch 1 copies the batch instead
        target = arrays.get(node.input[1]) if node.op_type == "Reshape" else None
        if target is not None and target[0] == 1:
            arrays[node.input[1]] = np.concatenate([[0], target[1:]]).astype(np.int64)
    fixed = {n: a for n, a in arrays.items() if n in used and n not in weights}
    inits = [numpy_helper.from_array(a, n) for n, a in fixed.items()]
    inits += [numpy_helper.from_array(w.astype(np.float32), n) for n, w in weights.items() if n in used]
    ends = []
    for value in [i for i in graph.input if i.name not in arrays] + list(graph.output):
        end = onnx.ValueInfoProto()
        end.CopyFrom(value)
        end.type.tensor_type.shape.dim[0].dim_value = batch
        ends.append(end)
    out = helper.make_graph(nodes, graph.name, ends[:1], ends[1:], initializer=inits)
    return helper.make_model(out, opset_imports=list(model.opset_import), ir_version=max(model.ir_version, 4))


def _make(engine: str, path: str, threads: int | None):
    if engine == "onnxruntime":
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return lambda x: session.run(None, {name: x})[0], None
    from paddlectl.framework.inference import Config, create_predictor

    config = Config(path)
    if threads is not None:
        config.set_cpu_math_library_num_threads(threads)
    predictor = create_predictor(config)
    return lambda x: predictor.run([x])[0], predictor


def worker(engine: str, setup: str, case: str, runs: str) -> dict:
    model, shape, _ = CASES[case]
    threads = SETUPS[setup]
    path = _model_path(model, shape[0])
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    start = time.perf_counter()
    run, predictor = _make(engine, path, threads)
    run(x)
    first = time.perf_counter() - start
    if predictor is not None:  # on a cold cache: time the compiled kernels, not their NumPy references
        from paddlectl.framework.kernels import background

        background.wait(900)
    start = time.perf_counter()
    run, predictor = _make(engine, path, threads)
    run(x)
    warm = time.perf_counter() - start
    times = []
    for _ in range(int(runs)):
        start = time.perf_counter()
        run(x)
        times.append(time.perf_counter() - start)
    result = {
        "median_ms": 1e3 * float(np.median(times)),
        "p95_ms": 1e3 * float(np.percentile(times, 95)),
        "first_s": first,
        "warm_load_s": warm,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if predictor is not None:
        result["profile"] = predictor.profile([x])
    return result


def blas_info() -> str:
    from threadpoolctl import threadpool_info

    return "; ".join(
        f"{i.get('internal_api')} {i.get('version')} kernel={i.get('architecture')} threads={i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        print(json.dumps(worker(*sys.argv[2:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {list(CASES)}")
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, from {list(SETUPS)}")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="interleaved runs per engine, setup and case")
    parser.add_argument("--runs", type=int, help="timed runs per process (default: each case's own count)")
    args = parser.parse_args()
    cases, setups = args.cases.split(","), args.setups.split(",")
    unknown = [c for c in cases if c not in CASES] + [s for s in setups if s not in SETUPS]
    if unknown:
        parser.error(f"unknown cases or setups {unknown}")
    print(f"BLAS: {blas_info()}")
    print(f"setups: {SETUPS}; cpus: {os.cpu_count()}")
    print(f"each engine, setup and case: the middle of {args.rounds} interleaved runs")
    for case in cases:  # the zoo files with drawn weights are written before any worker is timed
        _model_path(CASES[case][0], CASES[case][1][0])
    rows, profiles = [], {}
    for case in cases:
        runs_per_process = str(args.runs or CASES[case][2])
        for setup in setups:
            runs: dict[str, list] = {"onnxruntime": [], "paddlectl": []}
            for _ in range(args.rounds):  # interleaved, so a slow spell hits both engines alike
                for engine, engine_runs in runs.items():
                    out = subprocess.run(
                        [sys.executable, __file__, "--worker", engine, setup, case, runs_per_process],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    engine_runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            for engine, engine_runs in runs.items():
                r = middle(engine_runs, first=("first_s",))
                rows.append((case, setup, engine, r))
                if "profile" in r and setup == "default":
                    profiles[case] = r["profile"]
    header = (
        f"{'case':<16}{'setup':<11}{'engine':<13}{'median ms (rounds)':>22}{'p95 ms':>9}{'first s':>9}{'warm s':>8}"
        f"{'RSS MB':>8}{'ratio (per round)':>22}"
    )
    print(header)
    print("-" * len(header))
    ort = {}
    for case, setup, engine, r in rows:
        if engine == "onnxruntime":
            ort[case, setup] = r
        print(
            f"{case:<16}{setup:<11}{engine:<13}{ms_text(r):>22}{r['p95_ms']:>9.1f}{r['first_s']:>9.2f}"
            f"{r['warm_load_s']:>8.2f}{r['peak_rss_mb']:>8.0f}{ratio_text(r, ort[case, setup]):>22}"
        )
    print("\nwhere paddlectl's time goes (default setup, one warm run, share of op time by op type):")
    for case, profile in profiles.items():
        total = sum(profile.values())
        top = sorted(profile.items(), key=lambda kv: -kv[1])[:5]
        print(f"  {case:<16} {total * 1e3:7.1f} ms: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top))


if __name__ == "__main__":
    main()
