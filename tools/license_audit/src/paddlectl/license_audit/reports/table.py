"""The terminal view: a rich table of the inventory and one of the findings."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..audit import AuditResult
from ..policy import Action

STYLE = {Action.ALLOW: "[green]allow[/]", Action.FLAG: "[yellow]flag[/]", Action.DENY: "[red]DENY[/]"}


def print_tables(result: AuditResult, console: Console, strict: bool = False) -> None:
    """Print the inventory, the findings and a one-line summary."""
    inventory = Table(title=f"licence inventory ({len(result.audits)} items, policy {escape(result.policy.name)})")
    for column in ("item", "kind", "version", "licence", "choice", "conf.", "evidence", "verdict"):
        inventory.add_column(column, overflow="fold")
    for audit in result.audits:
        item = audit.item
        inventory.add_row(
            escape(item.name),
            item.kind.value,
            escape(item.version or ""),
            escape(item.license) if item.license else "[red]UNKNOWN[/]",
            escape(audit.verdict.choice) if audit.verdict and audit.verdict.choice else "",
            f"{item.confidence:.2f}",
            escape(item.best.source) if item.best else "",
            STYLE[audit.action],
        )
    console.print(inventory)
    if result.findings:
        findings = Table(title="findings")
        for column in ("action", "item", "rule", "explanation"):
            findings.add_column(column, overflow="fold")
        for finding in sorted(result.findings, key=lambda f: (-f.action, f.item)):
            findings.add_row(STYLE[finding.action], escape(finding.item), escape(finding.rule), escape(finding.message))
        console.print(findings)
    verdict = "[red]violations found[/]" if result.exit_code(strict) else "[green]no violations[/]"
    console.print(
        f"{verdict}: {len(result.violations)} denied, {len(result.flags)} flagged, "
        f"{len(result.unknowns)} licences not identified"
    )
