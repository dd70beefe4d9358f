"""Data-parallel training of the Transformer encoder workload (benchmarks/train_step.py) at 1 and 2
ranks: step time, scaling efficiency and the communication share of a step, measured.

Weak scaling: every rank trains on 16 sequences a step (the train_step workload's batch), with one
BLAS/Numba thread per rank so that 1 and 2 ranks get one core each. Per step the slowest rank's
time counts. "exposed comm" is the time backward spent blocked waiting for gradient reductions
(what overlap did not hide); "comm alone" is one blocking all-reduce of every gradient byte, in the
same buckets, timed on its own (the cost without overlap). Latency and bandwidth of an all-reduce
are measured too, for the communication model in packages/framework/README.md.

    python benchmarks/distributed.py [--steps 20] [--ranks 1,2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _allreduce_seconds(comm, nbytes: int, repeats: int) -> float:
    import numpy as np
    from mpi4py import MPI

    buffer = np.ones(max(nbytes // 4, 1), dtype=np.float32)
    comm.Barrier()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        comm.Allreduce(MPI.IN_PLACE, buffer, op=MPI.SUM)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def worker(steps: int) -> None:
    import numpy as np
    from mpi4py import MPI

    import paddlectl.framework as paddle
    import paddlectl.framework.distributed as dist

    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    comm = MPI.COMM_WORLD
    paddle.seed(0)
    nn = paddle.nn
    model = nn.Sequential(nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.1))
    model.add_sublayer("head", nn.Linear(256, 10))
    model = paddle.DataParallel(model)
    opt = paddle.optimizer.AdamW(learning_rate=1e-3, parameters=model.parameters())
    rng = np.random.default_rng(rank)
    x = paddle.to_tensor(rng.standard_normal((16, 64, 256)).astype("float32"))
    y = paddle.to_tensor(rng.integers(0, 10, (16, 64, 1)))
    loss_fn = nn.CrossEntropyLoss()
    reducer = model._reducer

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    for _ in range(3):
        step()
    step_s, waited = [], 0.0
    for _ in range(steps):
        comm.Barrier()
        before = reducer.wait_seconds if reducer else 0.0
        start = time.perf_counter()
        step()
        elapsed = np.array([time.perf_counter() - start])
        waited += (reducer.wait_seconds if reducer else 0.0) - before
        comm.Allreduce(MPI.IN_PLACE, elapsed, op=MPI.MAX)
        step_s.append(float(elapsed[0]))
    grad_bytes = sum(p._data.nbytes for p in model.parameters() if not p.stop_gradient)
    out = {"ranks": world, "step_ms": statistics.median(step_s) * 1e3, "grad_bytes": grad_bytes}
    if reducer is not None:
        out["buckets"] = len(reducer.buckets)
        out["exposed_comm_ms"] = waited / steps * 1e3
        out["comm_alone_ms"] = sum(_allreduce_seconds(comm, b.nbytes, 10) for b in reducer.buckets) * 1e3
        out["latency_us"] = _allreduce_seconds(comm, 4, 200) * 1e6
        big = 64 * 1024 * 1024
        out["bandwidth_GBps"] = big / _allreduce_seconds(comm, big, 5) / 1e9
    if rank == 0:
        print("RESULT " + json.dumps(out), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return
    os.environ.update(THREADS)
    from paddlectl.framework.distributed import launch

    results = []
    for ranks in [int(r) for r in args.ranks.split(",")]:
        lines: list[str] = []
        outcome = launch.run([__file__, "--worker", "--steps", str(args.steps)], ranks, echo=lines.append)
        if outcome.code != 0:
            sys.exit(f"{ranks} ranks: " + "; ".join(outcome.failures))
        results.append(json.loads(next(line for line in lines if line.startswith("RESULT "))[len("RESULT ") :]))
    base = results[0]["step_ms"]
    print(f"Transformer encoder, data parallel, 16 sequences x 64 tokens per rank, {args.steps} steps")
    print(f"{'ranks':>5} {'step ms':>8} {'seq/s':>7} {'efficiency':>10} {'exposed comm':>13} {'comm alone':>11}")
    for r in results:
        n = r["ranks"]
        exposed = f"{r['exposed_comm_ms']:.1f} ms {r['exposed_comm_ms'] / r['step_ms']:.0%}" if n > 1 else "-"
        alone = f"{r['comm_alone_ms']:.1f} ms" if n > 1 else "-"
        print(
            f"{n:>5} {r['step_ms']:>8.1f} {16 * n / r['step_ms'] * 1e3:>7.1f} {base / r['step_ms']:>10.2f} {exposed:>13} {alone:>11}"
        )
    for r in results[1:]:
        print(
            f"{r['ranks']} ranks: {r['grad_bytes'] / 1e6:.2f} MB of gradients in {r['buckets']} buckets; "
            f"all-reduce latency {r['latency_us']:.0f} us, bandwidth {r['bandwidth_GBps']:.2f} GB/s"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
