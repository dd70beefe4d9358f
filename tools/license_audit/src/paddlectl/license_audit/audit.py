"""The audit: apply a policy to every inventory item, its lineage and its evidence.

Produces findings (deny = violation, flag = needs a reviewer) and an obligations checklist; the
reports only present what this module decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from . import __version__
from .kb import KnowledgeBase
from .lineage import Inherited, Lineage
from .model import Item
from .normalize import Normalizer
from .policy import Action, Policy, Term, Verdict, evaluate_expression


@dataclass(frozen=True)
class Finding:
    item: str
    action: Action
    rule: str  # license, obligation, unknown, low-confidence, inherited, lineage, lineage-conflict, integrity
    message: str
    chain: tuple[str, ...] = ()
    license: str | None = None
    obligation: str | None = None


@dataclass
class ItemAudit:
    item: Item
    verdict: Verdict | None
    inherited: list[Inherited] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def action(self) -> Action:
        return max((f.action for f in self.findings), default=Action.ALLOW)

    @property
    def terms(self) -> frozenset[Term]:
        return self.verdict.terms if self.verdict else frozenset()


@dataclass
class AuditResult:
    policy: Policy
    audits: list[ItemAudit]
    kb: KnowledgeBase
    created: datetime
    tool_version: str = __version__
    scope: list[str] = field(default_factory=list)  # what was inventoried, in words (inventory.collect.describe)

    @property
    def findings(self) -> list[Finding]:
        return [f for a in self.audits for f in a.findings]

    @property
    def violations(self) -> list[Finding]:
        return [f for f in self.findings if f.action == Action.DENY]

    @property
    def flags(self) -> list[Finding]:
        return [f for f in self.findings if f.action == Action.FLAG]

    @property
    def unknowns(self) -> list[ItemAudit]:
        return [a for a in self.audits if a.item.license is None]

    def exit_code(self, strict: bool = False) -> int:
        """0 clean, 1 when there is a violation (or, with ``strict``, anything flagged)."""
        worst = max((f.action for f in self.findings), default=Action.ALLOW)
        return 1 if worst == Action.DENY or (strict and worst == Action.FLAG) else 0

    def checklist(self) -> dict[str, list[tuple[str, str, tuple[str, ...]]]]:
        """Obligation -> (item, licence, chain) for every obligation that applies, own or inherited."""
        out: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {name: [] for name in self.kb.obligations}
        for audit_ in self.audits:
            for term in sorted(audit_.terms, key=lambda t: (t.obligation, t.license)):
                out[term.obligation].append((audit_.item.name, term.license, ()))
            for entry in audit_.inherited:
                if entry.term is not None:
                    out[entry.term.obligation].append((audit_.item.name, entry.term.license, entry.chain))
        return {name: rows for name, rows in out.items() if rows}


def _licence_findings(item: Item, verdict: Verdict | None, policy: Policy) -> list[Finding]:
    if verdict is None:
        why = (
            "; ".join(dict.fromkeys(f"{e.source}: {e.normalized.note}" for e in item.evidence))
            or "no licence evidence found"
        )
        return [Finding(item.id, policy.unknown, "unknown", f"licence not identified ({why})", license=None)]
    findings = [
        Finding(item.id, r.action, r.rule, r.message, license=r.license, obligation=r.obligation)
        for r in verdict.reasons
    ]
    if item.confidence < policy.min_confidence:
        best = item.best
        message = (
            f"the licence {item.license} rests on weak evidence ({best.source}: {best.normalized.note}, "
            f"confidence {item.confidence:.2f} < {policy.min_confidence:.2f}); confirm it"
        )
        findings.append(Finding(item.id, Action.FLAG, "low-confidence", message, license=item.license))
    return findings


def _lineage_findings(item: Item, own: frozenset[Term] | None, lineage: Lineage, policy: Policy) -> list[Finding]:
    findings = []
    for link in item.links:
        if lineage.resolve(link) is None:
            message = (
                f"{item.name} names {link.relation} {link.target!r}, which is not in the inventory; "
                "add its card or describe it inline in asset.yaml so its licence can be checked"
            )
            findings.append(Finding(item.id, policy.unknown, "lineage", message, chain=(item.name, link.target)))
    own_obligations = {t.obligation for t in own or ()}
    for entry in lineage.inherited(item):
        if entry.term is None:
            message = f"an ancestor's licence is unknown, so what {item.name} inherits cannot be checked"
            findings.append(
                Finding(item.id, policy.unknown, "lineage", f"{message}: {entry.describe_chain()}", entry.chain)
            )
            continue
        action = policy.obligation_action(entry.term)
        if action == Action.ALLOW or entry.term.obligation in own_obligations:
            continue
        message = f"{item.name} inherits {entry.term.obligation} from {entry.chain[-1]} ({entry.term.license}) via {entry.describe_chain()}"
        findings.append(
            Finding(item.id, action, "inherited", message, entry.chain, entry.term.license, entry.term.obligation)
        )
    for conflict in lineage.conflicts(item):
        term = conflict.term
        findings.append(
            Finding(
                item.id,
                policy.lineage_conflict,
                "lineage-conflict",
                f"{conflict.kind}: {conflict.message} (chain: {' <- '.join(conflict.chain)})",
                conflict.chain,
                term.license if term else None,
                term.obligation if term else None,
            )
        )
    return findings


def run_audit(
    items: list[Item], policy: Policy, kb: KnowledgeBase, normalizer: Normalizer, now: datetime | None = None
) -> AuditResult:
    """Audit an inventory under a policy."""
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError("run_audit needs each item once; merge the inventory first (inventory.collect.merge)")
    verdicts = {
        item.id: evaluate_expression(item.license, policy, kb, normalizer) if item.license else None for item in items
    }
    own_terms = {item_id: (v.terms if v else None) for item_id, v in verdicts.items()}
    lineage = Lineage(items, own_terms, kb)
    audits = []
    for item in items:
        verdict = verdicts[item.id]
        findings = _licence_findings(item, verdict, policy)
        findings += [
            Finding(item.id, Action.DENY, "integrity", p.message) for p in item.problems if p.kind == "integrity"
        ]
        findings += _lineage_findings(item, own_terms[item.id], lineage, policy)
        audits.append(ItemAudit(item, verdict, lineage.inherited(item), findings))
    return AuditResult(policy, audits, kb, now or datetime.now(UTC))
