"""The machine-readable audit: everything the other reports show, as one JSON document."""

from __future__ import annotations

import json
from typing import Any

from ..audit import AuditResult, Finding, ItemAudit


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "item": finding.item,
        "action": str(finding.action),
        "rule": finding.rule,
        "message": finding.message,
        "chain": list(finding.chain),
        "license": finding.license,
        "obligation": finding.obligation,
    }


def _item(audit: ItemAudit) -> dict[str, Any]:
    item, verdict = audit.item, audit.verdict
    return {
        "id": item.id,
        "name": item.name,
        "kind": item.kind.value,
        "version": item.version,
        "license": item.license,
        "confidence": round(item.confidence, 2),
        "verdict": str(audit.action),
        "choice": verdict.choice if verdict else None,
        "alternatives": list(verdict.alternatives) if verdict else [],
        "obligations": sorted({t.obligation for t in audit.terms}),
        "evidence": [
            {
                "source": e.source,
                "location": e.location,
                "value": e.value,
                "read_as": e.normalized.expression,
                "method": e.normalized.method,
                "note": e.normalized.note,
                "confidence": e.confidence,
            }
            for e in item.evidence
        ],
        "disagreements": item.disagreements(),
        "lineage": [{"relation": link.relation, "target": link.target} for link in item.links],
        "inherited": [
            {
                "obligation": entry.term.obligation if entry.term else None,
                "license": entry.term.license if entry.term else None,
                "chain": list(entry.chain),
                "relations": list(entry.relations),
            }
            for entry in audit.inherited
        ],
        "files": [{"path": f.path, "sha256": f.sha256} for f in item.files],
        "problems": [{"kind": p.kind, "message": p.message} for p in item.problems],
        "notice_files": [path for path, _ in item.notices],
        "source": item.source,
        "supplier": item.supplier,
        "license_link": item.license_link,
        "purl": item.purl,
    }


def to_dict(result: AuditResult, strict: bool = False) -> dict[str, Any]:
    """The audit as plain data (stable keys; documented in the README)."""
    return {
        "tool": {"name": "paddlectl-license-audit", "version": result.tool_version},
        "created": result.created.isoformat(),
        "policy": {"name": result.policy.name, "description": result.policy.description, "path": result.policy.path},
        "scope": result.scope,
        "summary": {
            "items": len(result.audits),
            "violations": len(result.violations),
            "flags": len(result.flags),
            "unknown_licences": len(result.unknowns),
            "exit_code": result.exit_code(strict),
        },
        "findings": [_finding(f) for f in result.findings],
        "obligations": {
            name: {
                "what_to_do": result.kb.obligations[name],
                "items": [{"item": item, "license": lic, "chain": list(chain)} for item, lic, chain in rows],
            }
            for name, rows in result.checklist().items()
        },
        "unknowns": [a.item.id for a in result.unknowns],
        "items": [_item(a) for a in result.audits],
    }


def render_json(result: AuditResult, strict: bool = False) -> str:
    return json.dumps(to_dict(result, strict), indent=2, ensure_ascii=False) + "\n"
