"""The audit for a human reviewer: summary, violations, review items, unknowns, obligations, inventory."""

from __future__ import annotations

from ..audit import AuditResult, Finding
from ..policy import Action


def _cell(text: object) -> str:
    return str(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _findings(result: AuditResult, findings: list[Finding], empty: str) -> list[str]:
    if not findings:
        return [empty, ""]
    names = {a.item.id: a.item.name for a in result.audits}
    rows = [[names[f.item], f.rule, f.message, " <- ".join(f.chain)] for f in findings]
    return _table(["item", "rule", "explanation", "lineage chain"], rows)


def _licence_sources(result: AuditResult) -> list[str]:
    used = sorted({t.license for a in result.audits for t in a.terms} & set(result.kb.licenses))
    facts = [result.kb.licenses[lic] for lic in used]
    rows = [[f.id, f.name, f.category, f.summary or "", f.source] for f in facts]
    return _table(["licence id", "name", "category", "note", "source"], rows)


def render_markdown(result: AuditResult, strict: bool = False) -> str:
    """The Markdown report."""
    policy = result.policy
    status = {0: "no violations", 1: "violations found"}[result.exit_code(strict)]
    out = [
        f"# Licence audit under the `{policy.name}` policy",
        "",
        f"Generated {result.created:%Y-%m-%d %H:%M} UTC by paddlectl-license-audit {result.tool_version}. "
        "This report summarises licence facts for review; it is not legal advice.",
        "",
        f"**Use case.** {policy.description}" if policy.description else "",
        "",
        "## Summary",
        "",
        f"- Result: **{status}** (exit code {result.exit_code(strict)})",
        f"- Items audited: {len(result.audits)}",
        f"- Violations (denied by the policy): {len(result.violations)}",
        f"- Needs review (flagged): {len(result.flags)}",
        f"- Licences not identified: {len(result.unknowns)}",
        "",
        *(["## Scope", "", *(f"- {line}" for line in result.scope), ""] if result.scope else []),
        "## Violations",
        "",
        *_findings(result, result.violations, "None."),
        "## Needs review",
        "",
        *_findings(result, result.flags, "Nothing flagged."),
        "## Licences not identified",
        "",
    ]
    unknown_rows = [
        [
            a.item.name,
            a.item.kind.value,
            "; ".join(dict.fromkeys(e.normalized.note for e in a.item.evidence)),
            a.item.license_link or a.item.source,
        ]
        for a in result.unknowns
    ]
    out += _table(["item", "kind", "what was found", "where to look"], unknown_rows) if unknown_rows else ["None.", ""]
    out += ["## Obligations checklist", ""]
    for name, rows in result.checklist().items():
        action = policy.obligations.get(name, Action.ALLOW)
        out.append(f"- [ ] **{name}** ({action} under this policy): {result.kb.obligations[name]}")
        for item, lic, chain in rows:
            via = f", inherited via {' <- '.join(chain)}" if chain else ""
            out.append(f"  - {item} ({lic}{via})")
    out += ["", "## Inventory", ""]
    inventory_rows = [
        [
            a.item.name,
            a.item.kind.value,
            a.item.version or "",
            a.item.license or "UNKNOWN",
            a.verdict.choice if a.verdict and a.verdict.choice else "",
            f"{a.item.confidence:.2f}",
            a.item.best.source if a.item.best else "",
            str(a.action),
        ]
        for a in result.audits
    ]
    out += _table(
        ["item", "kind", "version", "licence", "choice taken", "confidence", "evidence", "verdict"], inventory_rows
    )
    out += ["## Licence sources", "", *_licence_sources(result)]
    return "\n".join(out).rstrip() + "\n"
