"""``paddlectl compat``: will this combination of versions work here, or on that machine?

Exit codes: 0 it fits, 1 it does not fit (the explanation says why and what would), 2 usage or
data error (a malformed matrix or profile, an unknown package, an invalid specifier).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from . import grid, monorepo
from .errors import CompatError, UsageError
from .explain import Explanation, Node
from .fileio import write_text_atomic
from .lock import write_lock
from .matrix import POLICIES, load_matrix
from .model import KINDS, Candidate, parse_requirement
from .plan import Plan, check, plan, why
from .platform import FACTS, probe
from .profile import installed_from_pins, installed_here, load_profile, versions_here
from .resolver import Context, Options, Undecided, Unsatisfiable

FITS, DOES_NOT_FIT, USAGE = 0, 1, 2
ALL_KINDS = ",".join(KINDS)

app = typer.Typer(
    name="compat",
    help="Compatibility matrix: does this combination of Paddle, suites, Python, CUDA and drivers fit?",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

TargetOpt = Annotated[str | None, typer.Option("--target", "-t", help="Profile name or YAML file of another machine.")]
FactOpt = Annotated[list[str], typer.Option("--fact", help="Override a platform fact, e.g. --fact driver=560.35.03.")]
MatrixOpt = Annotated[
    list[Path], typer.Option("--matrix", help="Matrix YAML file(s) to use instead of the bundled data.")
]
PolicyOpt = Annotated[
    str, typer.Option("--policy", help="strict: every claim holds; lenient: disagreeing sources, any one.")
]
KindsOpt = Annotated[str, typer.Option("--kinds", help="Which claims count: comma-separated declared,tested,reported.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


@contextlib.contextmanager
def usage_errors():
    """A data or usage mistake becomes one line on stderr and exit code 2."""
    try:
        yield
    except CompatError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(USAGE) from None
    except Undecided as exc:
        err_console.print(f"undecided: {exc}", markup=False, highlight=False)
        raise typer.Exit(DOES_NOT_FIT) from None


def _options(policy: str, kinds: str) -> Options:
    if policy not in POLICIES:
        raise UsageError(f"--policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    chosen = tuple(k.strip() for k in kinds.split(",") if k.strip())
    bad = [k for k in chosen if k not in KINDS]
    if bad or not chosen:
        raise UsageError(f"--kinds takes a comma-separated subset of {', '.join(KINDS)}, got {kinds!r}")
    return Options(policy, chosen)


def _facts(pairs: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().removeprefix("__")
        if not sep or key not in FACTS:
            raise UsageError(
                f"--fact {pair!r} must be KEY=VALUE with KEY one of {', '.join(FACTS)} (empty VALUE removes it)"
            )
        out[key] = (value.split(",") if key == "cpu" else value) if value else None
    return out


def _setup(target, facts, matrix_files, policy, kinds) -> tuple[Context, dict[str, Candidate]]:
    """The matrix, the platform (target profile or this machine, with overrides) and what is installed."""
    matrix = load_matrix(list(matrix_files) or None)
    if target:
        profile = load_profile(target)
        platform, installed = profile.platform, installed_from_pins(matrix, profile.installed)
    else:
        platform, _ = probe()
        installed = installed_here(matrix)
    if facts:
        platform = platform.with_overrides(_facts(facts))
    return Context(matrix, platform, _options(policy, kinds)), installed


def _tree(nodes: list[Node], title: str) -> Tree:
    root = Tree(escape(title))

    def add(parent: Tree, node: Node) -> None:
        branch = parent.add(escape(node.label))
        for child in node.children:
            add(branch, child)

    for node in nodes:
        add(root, node)
    return root


def _print_explanation(explanation: Explanation) -> None:
    console.print(_tree(explanation.tree, "[does not fit]"), soft_wrap=False)
    for sentence in explanation.sentences:
        console.print(escape(sentence))
    if explanation.blockers:
        console.print("[bold]Platform facts in the way, all of them:[/]")
        for blocker in explanation.blockers:
            console.print(f"  - {escape(blocker)}")
    if explanation.fixes:
        console.print("[bold]What would fit:[/]")
        for fix in explanation.fixes:
            console.print(f"  - {escape(fix)}")
    for note in explanation.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")


def _print_plan(result: Plan, title: str) -> None:
    if result.explanation is not None:
        _print_explanation(result.explanation)
        return
    if not result.changes:
        console.print("[green]fits as installed: nothing to change[/]")
        return
    table = Table(title=escape(title))
    for col in ("package", "old", "new", "why"):
        table.add_column(col, overflow="fold")
    for change in result.changes:
        old = "-" if change.old is None else f"{change.old.shown_version} {change.old.build}".strip()
        new = "(remove)" if change.new is None else f"{change.new.shown_version} {change.new.build}".strip()
        table.add_row(*(escape(text) for text in (change.name, old, f"-> {new}", change.reason)))
    console.print(table, soft_wrap=False)


@app.command("probe")
def probe_command(json_out: JsonOpt = False) -> None:
    """Print this machine's platform facts (the virtual packages __python, __os, __driver ...)."""
    platform, notes = probe()
    if json_out:
        print(json.dumps({"facts": platform.values(), "notes": notes}, indent=2))
        return
    table = Table(title="platform facts of this machine")
    for col in ("fact", "value", "meaning"):
        table.add_column(col)
    for key, value in platform.values().items():
        table.add_row(f"__{key}", escape(", ".join(value) if isinstance(value, list) else value), FACTS[key])
    console.print(table, soft_wrap=False)
    for note in notes:
        console.print(f"[dim]{escape(note)}[/]")


@app.command("check")
def check_command(
    target: TargetOpt = None,
    fact: FactOpt = [],  # noqa: B006 - typer copies it
    matrix: MatrixOpt = [],  # noqa: B006
    policy: PolicyOpt = "strict",
    kinds: KindsOpt = ALL_KINDS,
    json_out: JsonOpt = False,
) -> None:
    """Is what is installed consistent? Exit 1 and explain if not."""
    with usage_errors():
        ctx, installed = _setup(target, fact, matrix, policy, kinds)
        result = check(ctx, installed, None if target else versions_here())
    if json_out:
        print(json.dumps({"installed": [c.pin() for c in installed.values()], **result.to_dict()}, indent=2))
    elif result.fits:
        console.print(
            f"[green]consistent:[/] {len(installed)} packages of the matrix installed, every requirement met on {escape(ctx.platform.origin)}"
        )
    else:
        console.print(_tree(result.tree, "[inconsistent]"), soft_wrap=False)
        for problem in result.problems:
            console.print(escape(problem))
        if result.fix is not None:
            _print_plan(result.fix, "the smallest change that makes it consistent")
    raise typer.Exit(FITS if result.fits else DOES_NOT_FIT)


@app.command("plan")
def plan_command(
    upgrade: Annotated[list[str], typer.Option("--upgrade", "-u", help="NAME==VERSION (or any specifier) to move to.")],
    target: TargetOpt = None,
    fact: FactOpt = [],  # noqa: B006
    matrix: MatrixOpt = [],  # noqa: B006
    policy: PolicyOpt = "strict",
    kinds: KindsOpt = ALL_KINDS,
    json_out: JsonOpt = False,
) -> None:
    """The smallest set of changes that makes an upgrade fit, as old -> new, or why it cannot."""
    with usage_errors():
        ctx, installed = _setup(target, fact, matrix, policy, kinds)
        try:
            wanted = [parse_requirement(text, "requested") for text in upgrade]
        except ValueError as exc:
            raise UsageError(f"--upgrade: {exc}") from None
        result = plan(ctx, installed, wanted)
    if json_out:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _print_plan(result, f"plan for {', '.join(upgrade)} on {ctx.platform.origin}")
    raise typer.Exit(FITS if result.fits else DOES_NOT_FIT)


@app.command("why")
def why_command(
    name: Annotated[str, typer.Argument(help="A package or platform fact (__driver).")],
    target: TargetOpt = None,
    fact: FactOpt = [],  # noqa: B006
    matrix: MatrixOpt = [],  # noqa: B006
    policy: PolicyOpt = "strict",
    kinds: KindsOpt = ALL_KINDS,
    json_out: JsonOpt = False,
) -> None:
    """What requires NAME among the installed packages, as a tree."""
    with usage_errors():
        ctx, installed = _setup(target, fact, matrix, policy, kinds)
        node = why(ctx, installed, name)
    if json_out:
        print(json.dumps(node.to_dict(), indent=2))
    else:
        console.print(_tree(node.children, node.label), soft_wrap=False)


@app.command("matrix")
def matrix_command(
    package: Annotated[list[str], typer.Option("--package", "-p", help="Only these packages.")] = [],  # noqa: B006
    dataset: Annotated[str | None, typer.Option("--dataset", help="upstream or monorepo.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown, html or json.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file (atomically).")] = None,
    matrix: MatrixOpt = [],  # noqa: B006
) -> None:
    """The matrix as a grid: versions x platform facts and requirements, with their sources."""
    with usage_errors():
        if fmt not in grid.FORMATS:
            raise UsageError(f"--format must be one of {', '.join(grid.FORMATS)}, got {fmt!r}")
        loaded = load_matrix(list(matrix) or None)
        datasets = sorted({p.dataset for p in loaded.packages.values()})
        if dataset is not None and dataset not in datasets:
            raise UsageError(f"--dataset must be one of {', '.join(datasets)}, got {dataset!r}")
        rows = grid.rows(loaded, package, dataset)
        title = "compatibility matrix" + (f" ({dataset})" if dataset else "")
        if fmt == "table":
            if output is not None:
                raise UsageError("--output needs --format markdown, html or json")
            console.print(grid.to_table(rows, title), soft_wrap=False)
            return
        text = {
            "markdown": lambda: grid.to_markdown(rows, loaded),
            "html": lambda: grid.to_html(rows, loaded, title),
            "json": lambda: grid.to_json(rows, loaded),
        }[fmt]()
        if output is None:
            print(text, end="")
        else:
            write_text_atomic(output, text)
            console.print(f"wrote {escape(str(output))}")


@app.command("selfcheck")
def selfcheck_command(
    root: Annotated[
        Path | None, typer.Option("--root", help="The monorepo root (found from the current directory).")
    ] = None,
    write: Annotated[
        bool, typer.Option("--write", help="Regenerate data/monorepo.yaml from the pyproject files.")
    ] = False,
) -> None:
    """Do the bundled monorepo data and the packages' pyproject.toml files agree? Exit 1 if not."""
    with usage_errors():
        found = monorepo.find_root(root)
        if write:
            console.print(f"wrote {escape(str(monorepo.write(found)))}")
        problems = monorepo.selfcheck(found)
    if problems:
        for problem in problems:
            err_console.print(f"disagrees: {problem}", markup=False)
        err_console.print("fix: run `paddlectl compat selfcheck --write` and commit data/monorepo.yaml", markup=False)
        raise typer.Exit(DOES_NOT_FIT)
    console.print(f"[green]agrees:[/] data/monorepo.yaml matches the pyproject files under {escape(str(found))}")


@app.command("lock")
def lock_command(
    profile: Annotated[str, typer.Option("--profile", help="Profile name (bundled) or YAML file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Lock file to write, e.g. requirements/NAME.txt.")],
    generate_hashes: Annotated[bool, typer.Option("--generate-hashes", help="Pin hashes too.")] = False,
    find_links: Annotated[list[str], typer.Option("--find-links", help="Passed to pip-compile.")] = [],  # noqa: B006
    no_index: Annotated[bool, typer.Option("--no-index", help="Passed to pip-compile: no package index.")] = False,
    matrix: MatrixOpt = [],  # noqa: B006
    policy: PolicyOpt = "strict",
    kinds: KindsOpt = ALL_KINDS,
) -> None:
    """Resolve a profile and pin it into a lock file with pip-tools' pip-compile."""
    with usage_errors():
        chosen = load_profile(profile)
        ctx = Context(load_matrix(list(matrix) or None), chosen.platform, _options(policy, kinds))
        try:
            lock, source = write_lock(ctx, chosen, output, generate_hashes, find_links, no_index)
        except Unsatisfiable as failure:
            from .explain import explain

            _print_explanation(explain(ctx, failure, list(chosen.requires)))
            raise typer.Exit(DOES_NOT_FIT) from None
    console.print(f"wrote {escape(str(lock))} (from {escape(str(source))})")
