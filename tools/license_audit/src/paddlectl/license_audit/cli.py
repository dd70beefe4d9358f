"""``paddlectl license``: audit licences of code, weights and data; explain licences; verify manifests.

Exit codes: 0 clean, 1 violation (or, with --strict, anything flagged; for ``verify`` a file
that does not match), 2 usage error (bad option, missing file, malformed policy or manifest).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .audit import run_audit
from .errors import LicenseAuditError
from .fileio import write_text
from .inventory.collect import Sources, build_inventory, describe
from .inventory.manifest import builtin_manifest, load_manifest, verify_files
from .kb import load_knowledge_base
from .normalize import default_normalizer
from .policy import Action, builtin_policies, evaluate_expression, load_policy
from .reports.formats import Format, renderer, write_reports
from .reports.table import STYLE, print_tables
from .resources import data_path

USAGE_ERROR = 2
DEFAULT_POLICY = "commercial-distribution"

console = Console()
err_console = Console(stderr=True)

app = typer.Typer(
    name="license",
    help="Licences of code, model weights, datasets and generated content: inventory, policy, reports, SBOMs.",
    no_args_is_help=True,
    add_completion=False,
)


@contextlib.contextmanager
def usage_errors():
    """Turn a user's mistake into a one-line message and exit code 2."""
    try:
        yield
    except LicenseAuditError as exc:  # one line, even where a parser's message spans several
        err_console.print(f"error: {' '.join(str(exc).split())}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(USAGE_ERROR) from None


def _manifest_path(value: str) -> Path:
    """A manifest path, or the name of one shipped with the package (``rapidocr-pp-ocrv4``)."""
    if Path(value).exists() or value.endswith((".yaml", ".yml")):
        return Path(value)
    return builtin_manifest(value).path


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        write_text(output, text)
        err_console.print(f"wrote {output}", markup=False, highlight=False)


@app.command()
def audit(
    policy: Annotated[
        str,
        typer.Option("--policy", "-p", help=f"Shipped policy ({', '.join(builtin_policies())}) or a policy YAML file."),
    ] = DEFAULT_POLICY,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Report format.")] = Format.TABLE,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report here instead of stdout.")
    ] = None,
    report_dir: Annotated[
        Path | None, typer.Option("--report-dir", help="Also write every report format into this folder.")
    ] = None,
    environment: Annotated[
        bool, typer.Option("--env/--no-env", help="Inventory the installed Python distributions.")
    ] = True,
    cards: Annotated[
        list[Path], typer.Option("--cards", help="A README.md card, or a folder of <org>/<name>/README.md cards.")
    ] = [],  # noqa: B006 - typer copies it
    assets: Annotated[
        list[str], typer.Option("--assets", help="An asset.yaml, or a shipped manifest name (rapidocr-pp-ocrv4).")
    ] = [],  # noqa: B006
    weights: Annotated[
        list[Path], typer.Option("--weights", help="An .onnx or .safetensors file licensed by its own metadata.")
    ] = [],  # noqa: B006
    project: Annotated[
        Path | None,
        typer.Option("--project", help="The project's pyproject.toml (default: ./pyproject.toml if present)."),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Fail (exit 1) on flagged items too.")] = False,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate",
            help="Validate SPDX and CycloneDX output with their official validators (slow for large inventories).",
        ),
    ] = False,
) -> None:
    """Inventory, normalise, apply the policy, check lineage, and report."""
    if fmt == Format.TABLE and output is not None:
        err_console.print(
            "error: --output needs a file format (--format json|markdown|notice|spdx|cyclonedx)", markup=False
        )
        raise typer.Exit(USAGE_ERROR)
    with usage_errors():
        kb, normalizer = load_knowledge_base(), default_normalizer()
        chosen = load_policy(policy, kb, normalizer)
        if project is None and Path("pyproject.toml").is_file():
            project = Path("pyproject.toml")
        sources = Sources(
            environment=environment,
            cards=tuple(cards),
            manifests=tuple(_manifest_path(a) for a in assets),
            weights=tuple(weights),
            project=project,
        )
        items = build_inventory(sources, normalizer)
        if not items:
            _nothing_to_audit()
        result = run_audit(items, chosen, kb, normalizer)
        result.scope = describe(sources, items)
    err_console.print(
        "\n  ".join(["scope of this audit:", *result.scope]), markup=False, highlight=False, soft_wrap=True
    )
    with usage_errors():  # an output path that cannot be written
        if fmt == Format.TABLE:
            print_tables(result, console, strict)
        else:
            _emit(renderer(fmt, strict, validate)(result), output)
        if report_dir is not None:
            for path in write_reports(result, report_dir, strict, validate):
                err_console.print(f"wrote {path}", markup=False, highlight=False)
    raise typer.Exit(result.exit_code(strict))


def _nothing_to_audit() -> None:
    err_console.print(
        "error: nothing to audit; drop --no-env or add --cards, --assets, --weights or --project", markup=False
    )
    raise typer.Exit(USAGE_ERROR)


@app.command()
def policies() -> None:
    """List the shipped policies and what each allows, flags and denies."""
    kb, normalizer = load_knowledge_base(), default_normalizer()
    table = Table(title="shipped policies (pass a YAML path to --policy for your own)")
    for column in ("policy", "use case", "deny", "flag", "unknown", "lineage conflicts"):
        table.add_column(column, overflow="fold")
    for name in builtin_policies():
        p = load_policy(name, kb, normalizer)
        by = {a: sorted(o for o, act in p.obligations.items() if act == a) for a in (Action.DENY, Action.FLAG)}
        table.add_row(
            *map(escape, (name, p.description, ", ".join(by[Action.DENY]), ", ".join(by[Action.FLAG]))),
            str(p.unknown),
            str(p.lineage_conflict),
        )
    console.print(table)
    console.print(f"policy files: {escape(str(data_path('policies')))}")


@app.command()
def explain(
    licence: Annotated[str, typer.Argument(help="A licence id, name, Hugging Face id or SPDX expression.")],
    policy: Annotated[str, typer.Option("--policy", "-p", help="Policy to judge it under.")] = DEFAULT_POLICY,
) -> None:
    """How a licence statement normalises, what the knowledge base says, and the policy's verdict."""
    with usage_errors():
        kb, normalizer = load_knowledge_base(), default_normalizer()
        chosen = load_policy(policy, kb, normalizer)
    normalized = normalizer.normalize(licence)
    if not normalized.known:
        err_console.print(
            f"error: {normalized.note}; give an SPDX id or expression (MIT, Apache-2.0 OR MIT), "
            "a Hugging Face id (cc-by-nc-4.0) or a licence's full name",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(USAGE_ERROR)
    console.print(f"{escape(licence)!s} -> [bold]{escape(normalized.expression)}[/] (from {escape(normalized.note)})")
    table = Table(title="knowledge base")
    for column in ("licence", "name", "category", "commercial", "patent grant", "obligations", "source"):
        table.add_column(column, overflow="fold")
    for leaf in normalizer.leaves(normalized.expression):
        facts = kb.get(leaf.license)
        if facts is None:
            table.add_row(escape(str(leaf)), "[red]not in the knowledge base[/]", "", "", "", "", "")
            continue
        obligations = kb.obligations_of(leaf.license, leaf.exception) or frozenset()
        table.add_row(
            *map(escape, (str(leaf), facts.name, facts.category)),
            "yes" if facts.commercial_use else "no", "yes" if facts.patent_grant else "no",
            escape(", ".join(sorted(obligations))), escape(facts.source),
        )  # fmt: skip
    console.print(table)
    verdict = evaluate_expression(normalized.expression, chosen, kb, normalizer)
    choice = f" by choosing {escape(verdict.choice)}" if verdict.choice else ""
    console.print(f"under {escape(chosen.name)}: {STYLE[verdict.action]}{choice}")
    for reason in verdict.reasons:
        console.print(f"  {STYLE[reason.action]} {escape(reason.message)}")
    raise typer.Exit(1 if verdict.action == Action.DENY else 0)


@app.command()
def verify(
    manifest: Annotated[str, typer.Argument(help="An asset.yaml, or a shipped manifest name (rapidocr-pp-ocrv4).")],
) -> None:
    """Check every file an asset manifest lists against its recorded sha256."""
    with usage_errors():
        loaded = load_manifest(_manifest_path(manifest))
        checks = verify_files(loaded)
    table = Table(title=escape(str(loaded.path)))
    for column in ("asset", "file", "status"):
        table.add_column(column, overflow="fold")
    for check in checks:
        status = "[green]ok[/]" if check.ok else f"[red]{escape(check.describe())}[/]"
        table.add_row(escape(check.asset), escape(str(check.path)), status)
    console.print(table)
    raise typer.Exit(0 if all(c.ok for c in checks) else 1)
