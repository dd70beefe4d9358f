"""PP-OCR ONNX models: paddlectl's predictor (the model imported from ONNX) vs onnxruntime.

Run it here as::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/onnx_models.py [--cases "det 640x320,rec 6x48x320"] [--setups default]

(the environment pins OpenBLAS to a core type that is not this machine's; unsetting them lets
OpenBLAS pick its own kernel, which is printed below via threadpoolctl).

Cases: PP-OCRv4 det at 640x320, 736x736 and 960x544 (W x H), rec on a batch of 6 crops at 48x320,
cls on a batch of 6 at 48x192. Each case runs in two setups: "default", what a user gets without
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
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
from _rounds import middle  # benchmarks/, on sys.path when run as a script

CASES = {
    "det 640x320": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 320, 640), 10),
    "det 736x736": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 736, 736), 8),
    "det 960x544": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 544, 960), 8),
    "rec 6x48x320": ("ch_PP-OCRv4_rec_infer.onnx", (6, 3, 48, 320), 15),
    "cls 6x48x192": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (6, 3, 48, 192), 30),
}
SETUPS = {"default": None, "2 threads": 2}  # setup: threads (None: the engine's own default)
ROUNDS = 3


def _model_path(name: str) -> str:
    import rapidocr_onnxruntime

    return os.path.join(os.path.dirname(rapidocr_onnxruntime.__file__), "models", name)


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


def worker(engine: str, setup: str, case: str) -> dict:
    model, shape, runs = CASES[case]
    threads = SETUPS[setup]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    start = time.perf_counter()
    run, predictor = _make(engine, _model_path(model), threads)
    run(x)
    first = time.perf_counter() - start
    start = time.perf_counter()
    run, predictor = _make(engine, _model_path(model), threads)
    run(x)
    warm = time.perf_counter() - start
    times = []
    for _ in range(runs):
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
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        print(json.dumps(worker(*sys.argv[2:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {list(CASES)}")
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, from {list(SETUPS)}")
    args = parser.parse_args()
    cases, setups = args.cases.split(","), args.setups.split(",")
    unknown = [c for c in cases if c not in CASES] + [s for s in setups if s not in SETUPS]
    if unknown:
        parser.error(f"unknown cases or setups {unknown}")
    print(f"BLAS: {blas_info()}")
    print(f"setups: {SETUPS}; cpus: {os.cpu_count()}")
    print(f"each engine, setup and case: the middle of {ROUNDS} interleaved runs")
    rows, profiles = [], {}
    for case in cases:
        for setup in setups:
            runs: dict[str, list] = {"onnxruntime": [], "paddlectl": []}
            for _ in range(ROUNDS):  # interleaved, so a slow spell hits both engines alike
                for engine, engine_runs in runs.items():
                    out = subprocess.run(
                        [sys.executable, __file__, "--worker", engine, setup, case],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    engine_runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            for engine, engine_runs in runs.items():
                r = middle(engine_runs, first=("first_s",))
                rows.append((case, setup, engine, r))
                if "profile" in r and setup == "default":
                    profiles[case] = r["profile"]
    header = (
        f"{'case':<14}{'setup':<11}{'engine':<13}{'median ms':>10}{'p95 ms':>10}{'first s':>9}{'warm s':>8}"
        f"{'RSS MB':>8}{'ratio':>7}"
    )
    print(header)
    print("-" * len(header))
    ort_median = {}
    for case, setup, engine, r in rows:
        if engine == "onnxruntime":
            ort_median[case, setup] = r["median_ms"]
        ratio = r["median_ms"] / ort_median[case, setup]
        print(
            f"{case:<14}{setup:<11}{engine:<13}{r['median_ms']:>10.1f}{r['p95_ms']:>10.1f}{r['first_s']:>9.2f}"
            f"{r['warm_load_s']:>8.2f}{r['peak_rss_mb']:>8.0f}{ratio:>6.2f}x"
        )
    print("\nwhere paddlectl's time goes (default setup, one warm run, share of op time by op type):")
    for case, profile in profiles.items():
        total = sum(profile.values())
        top = sorted(profile.items(), key=lambda kv: -kv[1])[:5]
        print(f"  {case:<14} {total * 1e3:7.1f} ms: " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top))


if __name__ == "__main__":
    main()
