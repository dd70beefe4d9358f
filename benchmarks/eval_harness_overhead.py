"""Overhead of the evaluation harness per measured prediction.

What the harness adds to each timed request, measured two ways:

1. against a no-op request (nothing to predict): the time the harness puts *inside* the timed
   window (clock reads, the call) and the harness's whole cost per request (batch preparation,
   the loop, the format checks on the result);
2. side by side with a bare ``perf_counter`` loop around ``predictor.run`` on an exported LeNet
   (batch 1, one thread), alternating bare and harness blocks so machine noise hits both.

    python benchmarks/eval_harness_overhead.py [--requests 2000] [--blocks 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    from paddlectl.eval_harness.latency import TimedRequests, time_requests
except ImportError:  # run from a checkout without installing: the namespace spans src folders
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools/eval_harness/src"))
    try:
        from paddlectl.eval_harness.latency import TimedRequests, time_requests
    except ImportError as exc:  # its dependencies (mlflow, scipy, threadpoolctl ...) are missing here
        print(
            f"eval_harness_overhead: skipped, paddlectl-eval-harness cannot be imported here ({exc}); "
            "pip install -e tools/eval_harness"
        )
        sys.exit(0)

import numpy as np

import paddlectl.framework as paddle
from paddlectl.eval_harness.checks import batch_problems
from paddlectl.eval_harness.predictor import open_predictor
from paddlectl.framework.vision.models import LeNet


class ArgmaxTask:
    """The thinnest task: inputs are ready arrays, predictions are (label, score) pairs."""

    name = "bench.argmax"

    def preprocess(self, raw):
        return [raw[0]]

    def postprocess(self, outputs):
        return [(int(row.argmax()), 0.5) for row in outputs[0]]

    def check_prediction(self, prediction):
        return None if 0.0 <= prediction[1] <= 1.0 else "score out of range"


def harness_block(request, task, inputs, n: int) -> tuple[float, float]:
    """Median in-window latency (us) and wall time per request (us) of one harness block."""

    def check(out):
        outputs, predictions = out
        return next(iter(batch_problems(task, outputs, predictions, len(predictions)).values()), None)

    timed = time_requests(request, lambda i: inputs, TimedRequests(1), 0, n, check)
    return statistics.median(timed.samples_ms) * 1e3, timed.wall_s / n * 1e6


def bare_block(predictor, array, n: int) -> tuple[float, float]:
    samples = []
    clock = time.perf_counter_ns
    start = clock()
    for _ in range(n):
        t0 = clock()
        predictor.run([array])
        samples.append(clock() - t0)
    return statistics.median(samples) / 1e3, (clock() - start) / n / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="requests per block")
    parser.add_argument("--blocks", type=int, default=5, help="alternating bare/harness blocks")
    args = parser.parse_args()

    task = ArgmaxTask()
    noop_out = ([np.zeros((1, 10), np.float32)], [(3, 0.5)])
    noop = [harness_block(lambda raw: noop_out, task, [None], args.requests) for _ in range(args.blocks)]

    paddle.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "lenet"
        paddle.jit.save(LeNet(), str(model_dir), input_spec=[paddle.jit.InputSpec([None, 1, 28, 28], "float32", "x")])
        predictor = open_predictor(model_dir, threads=1)
    array = np.random.default_rng(0).random((1, 1, 28, 28), dtype=np.float32)

    def request(raw):
        outputs = predictor.run(task.preprocess(raw))
        return outputs, task.postprocess(outputs)

    for _ in range(200):  # compile and warm caches before either side is timed
        predictor.run([array])
    bare, harness = [], []
    for _ in range(args.blocks):
        bare.append(bare_block(predictor, array, args.requests))
        harness.append(harness_block(request, task, [array], args.requests))

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    print(f"eval_harness overhead ({args.blocks} blocks x {args.requests} requests, medians of block medians)")
    print(f"  no-op request, inside the timed window : {med(noop, 0):8.2f} us")
    print(f"  no-op request, harness wall per request: {med(noop, 1):8.2f} us  (loop, batching, format checks)")
    print(f"  LeNet bs1 bare loop      p50 {med(bare, 0):8.1f} us   wall/request {med(bare, 1):8.1f} us")
    print(f"  LeNet bs1 via harness    p50 {med(harness, 0):8.1f} us   wall/request {med(harness, 1):8.1f} us")
    print(f"  difference per measured prediction: p50 {med(harness, 0) - med(bare, 0):+.1f} us, "
          f"wall {med(harness, 1) - med(bare, 1):+.1f} us (task pre/post-processing included)")  # fmt: skip


if __name__ == "__main__":
    main()
