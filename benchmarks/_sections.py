"""Shared by the sectioned benchmark scripts: rows ``{"section", "measure", "value", "goal", "ok"}``,
one rich table of all of them, ``--json`` and the exit code (1 when a goal is missed)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

Row = dict[str, object]
Section = Callable[[argparse.Namespace], list[Row]]


def row(section: str, measure: str, value: object, goal: str = "", ok: bool | None = None) -> Row:
    return {"section": section, "measure": measure, "value": value, "goal": goal, "ok": ok}


def run(title: str, description: str, sections: dict[str, Section], add_arguments=None) -> None:
    """Parse ``--sections``/``--json`` (and the script's own options), run the chosen sections (a
    peer that is not installed makes its section a "skipped" row), print and exit."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sections", default=",".join(sections), help="comma-separated: " + ", ".join(sections))
    parser.add_argument("--json", help="also write the rows to this file")
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args()
    chosen = [s for s in args.sections.split(",") if s]
    unknown = sorted(set(chosen) - set(sections))
    if unknown:
        parser.error(f"unknown sections {unknown}; known: {sorted(sections)}")
    rows: list[Row] = []
    for name in chosen:
        try:
            rows += sections[name](args)
        except ModuleNotFoundError as exc:
            rows.append(row(name, "skipped", f"{exc.name} is not installed"))
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in ("section", "measure", "value", "goal", "ok"):
        table.add_column(column)
    for r in rows:
        value = f"{r['value']:.6g}" if isinstance(r["value"], float) else str(r["value"])
        ok = {True: "yes", False: "NO", None: ""}[r["ok"]]
        table.add_row(str(r["section"]), str(r["measure"]), value, str(r["goal"]), ok)
    Console().print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    sys.exit(0 if all(r["ok"] is not False for r in rows) else 1)
