"""Replay the code examples of Paddle's own API documentation on paddlectl.framework (issue 30).

Collects every ``>>>`` block from the docstrings of the Paddle modules a script uses, runs each
under real PaddlePaddle (twice, to tell reproducible output from random), keeps the blocks that run
there, replays them with ``import paddle`` resolving to ``paddlectl.framework``, and compares the
printed numbers. Prints one table per module and the totals; ``--json OUT`` keeps every block's
status and first error. Workers are subprocesses (an example may crash its interpreter); Paddle's
results are cached per Paddle version, since they only change with it.

    python benchmarks/paddle_api_examples.py [--module paddle.nn] [--workers 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _api_examples import collect, compare  # noqa: E402

MODULES = [
    "paddle",
    "paddle.nn",
    "paddle.nn.functional",
    "paddle.nn.initializer",
    "paddle.linalg",
    "paddle.fft",
    "paddle.optimizer",
    "paddle.optimizer.lr",
    "paddle.io",
    "paddle.metric",
    "paddle.autograd",
    "paddle.static",
    "paddle.static.nn",
    "paddle.jit",
    "paddle.amp",
    "paddle.vision",
    "paddle.vision.models",
    "paddle.vision.transforms",
    "paddle.vision.ops",
    "paddle.signal",
    "paddle.sparse",
    "paddle.sparse.nn",
    "paddle.sparse.nn.functional",
    "paddle.distribution",
]
WORKER = Path(__file__).resolve().parent / "_api_examples" / "worker.py"


def _run_workers(side: str, examples: list[dict], workers: int, timeout_s: int) -> dict[str, dict]:
    """Each worker takes a shard; a worker that dies mid-shard is restarted after the example that
    killed it, which is recorded as crashed."""
    shards = [examples[i::workers] for i in range(workers)]
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        pending = {i: shard for i, shard in enumerate(shards) if shard}
        while pending:
            procs = {}
            for i, shard in pending.items():
                source, out = Path(tmp, f"in{i}.json"), Path(tmp, f"out{i}.jsonl")
                source.write_text(json.dumps(shard))
                out.write_text("")
                cmd = [sys.executable, str(WORKER), side, str(source), str(out), str(timeout_s)]
                procs[i] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for proc in procs.values():
                proc.wait()
            still = {}
            for i, shard in pending.items():
                done = [json.loads(line) for line in Path(tmp, f"out{i}.jsonl").read_text().splitlines()]
                results.update({r["id"]: r for r in done})
                if len(done) < len(shard):
                    crashed = shard[len(done)]
                    results[crashed["id"]] = {"id": crashed["id"], "status": "crashed", "error": "the interpreter died"}
                    still[i] = shard[len(done) + 1 :]
            pending = {i: s for i, s in still.items() if s}
    return results


def _paddle_results(examples: list[dict], workers: int, timeout_s: int, cache: Path) -> dict[str, dict]:
    known = json.loads(cache.read_text()) if cache.is_file() else {}
    todo = [e for e in examples if e["id"] not in known]
    if todo:
        known.update(_run_workers("paddle", todo, workers, timeout_s))
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(".partial")
        partial.write_text(json.dumps(known))
        partial.replace(cache)
    return {e["id"]: known[e["id"]] for e in examples}


def _table(rows: list[dict]):
    from rich.table import Table

    table = Table(title="Paddle 3.3.1 API examples replayed on paddlectl.framework")
    for col in ("module", "examples", "run", "run %", "reproducible", "match", "match %"):
        table.add_column(col, justify="left" if col == "module" else "right")
    for r in rows:
        table.add_row(
            r["module"],
            str(r["examples"]),
            str(r["run"]),
            f"{100 * r['run'] / max(r['examples'], 1):.0f}",
            str(r["reproducible"]),
            str(r["match"]),
            f"{100 * r['match'] / max(r['reproducible'], 1):.0f}",
        )
    return table


def summarise(examples: list[dict], paddle: dict, ours: dict) -> tuple[list[dict], list[dict]]:
    """Per-module counts over the examples that run under Paddle, and one record per example."""
    records, per_module = [], {}
    for example in examples:
        theirs = paddle[example["id"]]
        if theirs["status"] != "ok":
            continue
        mine = ours.get(example["id"], {"status": "not run", "error": ""})
        ran = mine["status"] == "ok"
        verdict = compare(theirs["outputs"], mine["outputs"]) if ran and theirs["stable"] else None
        records.append(
            {
                "id": example["id"],
                "module": example["module"],
                "status": mine["status"],
                "error": mine.get("error", ""),
                "reproducible": theirs["stable"],
                "match": verdict,
                **({"paddle_printed": theirs["outputs"], "we_printed": mine["outputs"]} if verdict is False else {}),
            }
        )
        counts = per_module.setdefault(
            example["module"], {"module": example["module"], "examples": 0, "run": 0, "reproducible": 0, "match": 0}
        )
        counts["examples"] += 1
        counts["run"] += ran
        counts["reproducible"] += bool(ran and theirs["stable"])
        counts["match"] += bool(verdict)
    rows = list(per_module.values())
    total = {"module": "total", **{k: sum(r[k] for r in rows) for k in ("examples", "run", "reproducible", "match")}}
    return [*rows, total], records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="only these modules (repeatable)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=60, help="seconds per example")
    parser.add_argument("--json", type=Path, help="write every example's status here")
    parser.add_argument("--top", type=int, default=25, help="how many of the most frequent errors to list")
    args = parser.parse_args()

    import paddle  # the oracle: the examples come from its docstrings
    from rich.console import Console

    console = Console()
    examples = collect(args.module or MODULES)
    console.print(f"{len(examples)} example blocks in {len(args.module or MODULES)} modules")
    cache = Path.home() / ".cache" / "paddlectl" / f"paddle-{paddle.__version__}-api-examples.json"
    paddle_side = _paddle_results(examples, args.workers, args.timeout, cache)
    ours = _run_workers(
        "ours", [e for e in examples if paddle_side[e["id"]]["status"] == "ok"], args.workers, args.timeout
    )
    rows, records = summarise(examples, paddle_side, ours)
    console.print(_table(rows))
    errors = Counter(r["error"] for r in records if r["status"] != "ok")
    for error, count in errors.most_common(args.top):
        console.print(f"{count:4d}  {error}", markup=False, highlight=False, soft_wrap=True)
    if args.json:
        partial = args.json.with_suffix(".partial")
        partial.write_text(json.dumps({"modules": rows, "examples": records}, indent=1))
        partial.replace(args.json)


if __name__ == "__main__":
    main()
