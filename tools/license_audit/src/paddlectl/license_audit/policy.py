"""Policies per use case: allow, flag or deny by licence or by obligation, and how to read expressions.

A policy is YAML (``data/policies/*.yaml`` ship as defaults; users pass their own path):

    name: commercial-saas
    description: ...
    licenses: {allow: [...], flag: [...], deny: [...]}   # by normalised licence id
    obligations: {non-commercial: deny, use-restrictions: flag, ...}   # unlisted: allow
    unknown: flag            # licences not identified or not in the knowledge base
    lineage_conflict: deny   # a derivative drops inherited restrictions or breaks a naming rule
    min_confidence: 0.5      # weaker licence evidence is flagged for review

``A OR B`` passes if either choice passes and the verdict names the choice taken; ``A AND B``
needs both.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

import yaml

from .errors import PolicyError
from .kb import KnowledgeBase
from .normalize import Leaf, Node, Normalizer
from .resources import data_path
from .yamlio import safe_load


class Action(IntEnum):
    ALLOW = 0
    FLAG = 1
    DENY = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Term:
    """An obligation a licence brings (``license`` names the licence it comes from)."""

    license: str
    obligation: str


@dataclass(frozen=True)
class Reason:
    """Why an expression is not simply allowed: one licence or obligation and the action on it."""

    action: Action
    rule: str  # "license", "obligation" or "unknown"
    license: str
    obligation: str | None
    message: str


@dataclass(frozen=True)
class Verdict:
    action: Action
    reasons: tuple[Reason, ...] = ()
    terms: frozenset[Term] = frozenset()
    choice: str | None = None
    alternatives: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    licenses: dict[str, Action]
    obligations: dict[str, Action]
    unknown: Action
    lineage_conflict: Action
    min_confidence: float
    path: str

    def obligation_action(self, term: Term) -> Action:
        """The action on one obligation; a licence the policy explicitly allows carries no obligation action."""
        if self.licenses.get(term.license) == Action.ALLOW:
            return Action.ALLOW
        return self.obligations.get(term.obligation, Action.ALLOW)


POLICY_KEYS = {"name", "description", "licenses", "obligations", "unknown", "lineage_conflict", "min_confidence"}


def builtin_policies() -> list[str]:
    """Names of the policies shipped with the package."""
    return sorted(p.stem for p in data_path("policies").glob("*.yaml"))


def _suggest(word: str, options: list[str]) -> str:
    near = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {near[0]!r}?)" if near else f" (valid: {', '.join(sorted(options))})"


def _action(where: str, value: Any) -> Action:
    names = [str(a) for a in Action]
    if not isinstance(value, str) or value.lower() not in names:
        raise PolicyError(f"{where}: action must be one of {names}, found {value!r}")
    return Action[value.upper()]


def parse_policy(data: Any, path: str, kb: KnowledgeBase, normalizer: Normalizer) -> Policy:
    """Check a policy mapping and build the Policy; every mistake names the key and the fix."""
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: a policy is a YAML mapping with keys {sorted(POLICY_KEYS)}")
    for key in data:
        if key not in POLICY_KEYS:
            raise PolicyError(f"{path}: unknown key {key!r}{_suggest(str(key), sorted(POLICY_KEYS))}")
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise PolicyError(f"{path}: 'name' is required (a short name for the use case)")
    for key in ("licenses", "obligations"):
        if not isinstance(data.get(key) or {}, dict):
            raise PolicyError(f"{path}: {key} must be a mapping (see a shipped policy: paddlectl license policies)")
    licenses: dict[str, Action] = {}
    for action_name, ids in (data.get("licenses") or {}).items():
        action = _action(f"{path}: licenses.{action_name}", action_name)
        if not isinstance(ids, list):
            raise PolicyError(f"{path}: licenses.{action_name} must be a list of licence ids")
        for raw in ids:
            normalized = normalizer.normalize(str(raw))
            if not normalized.known or len(normalizer.leaves(normalized.expression)) != 1:
                raise PolicyError(f"{path}: licenses.{action_name}: {raw!r} is not one licence id ({normalized.note})")
            licenses[normalized.expression] = action
    obligations = {}
    for name, value in (data.get("obligations") or {}).items():
        if name not in kb.obligations:
            raise PolicyError(f"{path}: unknown obligation {name!r}{_suggest(str(name), sorted(kb.obligations))}")
        obligations[name] = _action(f"{path}: obligations.{name}", value)
    confidence = data.get("min_confidence", 0.5)
    if not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise PolicyError(f"{path}: min_confidence must be a number from 0 to 1, found {confidence!r}")
    return Policy(
        name=data["name"],
        description=str(data.get("description", "")).strip(),
        licenses=licenses,
        obligations=obligations,
        unknown=_action(f"{path}: unknown", data.get("unknown", "flag")),
        lineage_conflict=_action(f"{path}: lineage_conflict", data.get("lineage_conflict", "deny")),
        min_confidence=float(confidence),
        path=path,
    )


def load_policy(name_or_path: str | Path, kb: KnowledgeBase, normalizer: Normalizer) -> Policy:
    """A shipped policy by name (``commercial-saas``) or a user's policy file by path."""
    text = str(name_or_path)
    path = data_path("policies", f"{text}.yaml") if text in builtin_policies() else Path(text)
    if not path.is_file():
        raise PolicyError(
            f"no policy {text!r}: not a shipped policy{_suggest(text, builtin_policies())} and no such file"
        )
    try:
        data = safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise PolicyError(f"cannot read policy {path}: {exc}") from None
    return parse_policy(data, str(path), kb, normalizer)


def _leaf(leaf: Leaf, policy: Policy, kb: KnowledgeBase) -> Verdict:
    key = str(leaf)
    explicit = policy.licenses.get(key, policy.licenses.get(leaf.license))
    obligations = kb.obligations_of(leaf.license, leaf.exception)
    terms = frozenset(Term(leaf.license, o) for o in obligations or ())
    if explicit is not None:
        reasons = (
            ()
            if explicit == Action.ALLOW
            else (Reason(explicit, "license", key, None, f"the policy says {explicit} {key}"),)
        )
        return Verdict(explicit, reasons, terms)
    if obligations is None:
        missing = leaf.license if kb.get(leaf.license) is None else leaf.exception
        message = f"{missing} is not in the licence knowledge base; a reviewer must read its terms"
        return Verdict(policy.unknown, (Reason(policy.unknown, "unknown", key, None, message),), terms)
    reasons = tuple(
        Reason(
            action,
            "obligation",
            key,
            term.obligation,
            f"{key} brings {term.obligation}: {kb.obligations[term.obligation]}",
        )
        for term in sorted(terms, key=lambda t: t.obligation)
        if (action := policy.obligation_action(term)) != Action.ALLOW
    )
    return Verdict(max((r.action for r in reasons), default=Action.ALLOW), reasons, terms)


def _rank(verdict: Verdict) -> tuple[int, int, int]:
    return (verdict.action, len(verdict.reasons), len(verdict.terms))


def evaluate(node: Node, policy: Policy, kb: KnowledgeBase) -> Verdict:
    """The policy's verdict on a licence expression: AND needs every part, OR takes the best choice."""
    if isinstance(node, Leaf):
        return _leaf(node, policy, kb)
    parts = [evaluate(child, policy, kb) for child in node.children]
    if node.op == "AND":
        choices = [p.choice for p in parts if p.choice]
        return Verdict(
            action=max(p.action for p in parts),
            reasons=tuple(r for p in parts for r in p.reasons),
            terms=frozenset().union(*(p.terms for p in parts)),
            choice=" AND ".join(choices) if choices else None,
            alternatives=tuple(a for p in parts for a in p.alternatives),
        )
    best_index = min(range(len(parts)), key=lambda i: _rank(parts[i]))
    best = parts[best_index]
    chosen = best.choice or str(node.children[best_index])
    others = tuple(str(c) for i, c in enumerate(node.children) if i != best_index)
    return Verdict(best.action, best.reasons, best.terms, chosen, others + best.alternatives)


def evaluate_expression(expression: str, policy: Policy, kb: KnowledgeBase, normalizer: Normalizer) -> Verdict:
    """Evaluate a normalised expression string (parsed once and cached)."""
    return evaluate(normalizer.parse(expression), policy, kb)
