"""The matrix as a grid: one row per run of versions (and build) that make the same claims."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table

from .explain import compress
from .matrix import Matrix
from .model import Candidate, Claim, is_platform
from .platform import FACTS

FORMATS = ("table", "markdown", "html", "json")
DISAGREE = "  <- sources disagree"


@dataclass
class Row:
    package: str
    versions: str
    build: str
    cells: dict[str, str]  # column -> text
    sources: list[str]


def rows(matrix: Matrix, names: list[str] | None = None, dataset: str | None = None) -> list[Row]:
    """Grid rows for the chosen packages (all when ``names`` is empty), newest versions first."""
    chosen = [matrix.package(n) for n in names] if names else list(matrix.packages.values())
    if dataset:
        chosen = [p for p in chosen if p.dataset == dataset]
    out = []
    for package in sorted(chosen, key=lambda p: (p.dataset, p.name)):
        for build in sorted({c.build for c in package.candidates}):
            cands = sorted((c for c in package.candidates if c.build == build), key=lambda c: c.version)
            runs: list[list[Candidate]] = []
            for cand in cands:
                if runs and _signature(runs[-1][-1]) == _signature(cand):
                    runs[-1].append(cand)
                else:
                    runs.append([cand])
            known = [c.version for c in cands]
            for run in reversed(runs):
                out.append(_row(matrix, package.name, build, run, known))
    return out


def _signature(cand: Candidate) -> tuple:
    claims = tuple(sorted((str(c.req), c.source.key, c.kind) for c in cand.claims))
    return (claims, cand.info, tuple((extra, tuple(str(c.req) for c in found)) for extra, found in cand.extras))


def _row(matrix: Matrix, name: str, build: str, run: list[Candidate], known) -> Row:
    first = run[0]
    cells: dict[str, list[str]] = {}
    for claim in first.claims:
        column = claim.req.name if is_platform(claim.req.name) else "requires"
        text = str(claim.req)[len(claim.req.name) :] if is_platform(claim.req.name) else _dep_text(claim)
        cells.setdefault(column, [])
        if text not in cells[column]:
            cells[column].append(text)
    flagged = {g[0].req.name for g in matrix.disagreements(first)}
    text = {col: ", ".join(vals) + (DISAGREE if col in flagged else "") for col, vals in cells.items()}
    if matrix.packages[name].provides:
        text["module"] = matrix.packages[name].provides
    if first.extras:
        text["extras"] = "; ".join(f"[{e}] {', '.join(str(c.req) for c in found)}" for e, found in first.extras)
    info = [f"{k} {v}" for k, v in first.info if k in ("cudnn", "tensorrt")]
    if info:
        text["build facts"] = ", ".join(info)
    sources = sorted({f"{c.source.key} ({c.kind})" for c in first.claims})
    specs = compress(known, {c.version for c in run})
    versions = " or ".join(s.removeprefix("==") if s.count("=") == 2 and "," not in s else s for s in specs)
    return Row(name, versions or "all", build, text, sources)


def _dep_text(claim: Claim) -> str:
    return str(claim.req).replace("@", "module ", 1) if claim.req.name.startswith("@") else str(claim.req)


def columns(grid: list[Row]) -> list[str]:
    present = {col for row in grid for col in row.cells}
    facts = [f"__{k}" for k in FACTS if f"__{k}" in present]
    return [
        "package",
        "versions",
        "build",
        *facts,
        *[c for c in ("module", "requires", "extras", "build facts") if c in present],
        "sources",
    ]


def _values(row: Row, cols: list[str]) -> list[str]:
    fixed = {"package": row.package, "versions": row.versions, "build": row.build, "sources": ", ".join(row.sources)}
    return [fixed.get(c, row.cells.get(c, "")) for c in cols]


def to_table(grid: list[Row], title: str) -> Table:
    cols = columns(grid)
    table = Table(title=escape(title), show_lines=True)
    for col in cols:
        table.add_column(col, overflow="fold")
    for row in grid:
        table.add_row(*(escape(v) for v in _values(row, cols)))
    return table


def to_markdown(grid: list[Row], matrix: Matrix) -> str:
    cols = columns(grid)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in grid:
        lines.append("| " + " | ".join(v.replace("|", "\\|") for v in _values(row, cols)) + " |")
    lines += ["", "Sources:", ""]
    for key, source in sorted(matrix.sources.items()):
        note = f" ({source.note})" if source.note else ""
        lines.append(f"- `{key}`: [{source.title}]({source.url}), {source.date}{note}")
    return "\n".join(lines) + "\n"


def to_html(grid: list[Row], matrix: Matrix, title: str) -> str:
    cols = columns(grid)
    esc = html.escape
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = "\n".join(
        "<tr>"
        + "".join(f"<td{' class=disagree' if DISAGREE in v else ''}>{esc(v)}</td>" for v in _values(row, cols))
        + "</tr>"
        for row in grid
    )
    sources = "\n".join(
        f'<li><code>{esc(k)}</code>: <a href="{esc(s.url)}">{esc(s.title)}</a>, {esc(s.date)} {esc(s.note)}</li>'
        for k, s in sorted(matrix.sources.items())
    )
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{esc(title)}</title>"
        "<style>table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font:13px sans-serif}"
        ".disagree{background:#fee}</style></head><body>\n"
        f"<h1>{esc(title)}</h1>\n<table><tr>{head}</tr>\n{body}\n</table>\n<h2>Sources</h2><ul>\n{sources}\n</ul></body></html>\n"
    )


def to_json(grid: list[Row], matrix: Matrix) -> str:
    cols = columns(grid)
    return json.dumps(
        {
            "columns": cols,
            "rows": [dict(zip(cols, _values(row, cols), strict=True)) for row in grid],
            "sources": {k: vars(s) for k, s in sorted(matrix.sources.items())},
        },
        indent=2,
    )
