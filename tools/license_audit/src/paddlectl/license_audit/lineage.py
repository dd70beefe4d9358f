"""Model lineage: what a model inherits from its base models, training data and generators.

A fine-tune inherits its base model's restrictions, a model trained on a dataset inherits the
terms that reach results of using the data, and generated content carries its generator's output
and use terms (``propagation`` in ``data/licenses.yaml``). Every inherited term keeps the chain of
items that caused it, so a report can say *why* a permissively licensed model is not usable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import InputError
from .kb import KnowledgeBase
from .model import Item, Kind, Link
from .policy import Term

MAX_LINEAGE_DEPTH = 100
"""How many links a lineage chain may have: a real one has a handful; thousands are a hostile file,
and following them would exhaust Python's stack."""

PREFERRED_KIND = {"base_model": Kind.MODEL, "datasets": Kind.DATASET, "generated_by": Kind.MODEL}


@dataclass(frozen=True)
class Inherited:
    """A term reaching an item through its lineage; ``term`` is None when an ancestor's licence is unknown."""

    term: Term | None
    chain: tuple[str, ...]  # item names, the derived item first and the origin last
    relations: tuple[str, ...]  # the kind of each link along the chain

    @property
    def derivative_only(self) -> bool:
        """True when every link is fine-tuning, so the item is a derivative of the origin."""
        return all(r == "base_model" for r in self.relations)

    def describe_chain(self) -> str:
        return " <- ".join(self.chain)


@dataclass(frozen=True)
class Conflict:
    kind: str  # "restriction-dropped", "no-derivatives", "naming" or "cycle"
    message: str
    chain: tuple[str, ...]
    term: Term | None


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def follows_naming_rule(model_name: str, prefix: str) -> bool:
    """Whether a model's own name (the part after ``org/``) starts with the required prefix."""
    return _squash(model_name.rsplit("/", 1)[-1]).startswith(_squash(prefix))


class Lineage:
    """Resolves lineage links over one inventory and computes inherited terms (memoised)."""

    def __init__(self, items: list[Item], own_terms: dict[str, frozenset[Term] | None], kb: KnowledgeBase) -> None:
        self.kb = kb
        self.own_terms = own_terms
        self._by_name: dict[str, list[Item]] = {}
        for item in items:
            self._by_name.setdefault(item.name, []).append(item)
        self._memo: dict[str, list[Inherited]] = {}
        self._cycles: dict[str, list[Conflict]] = {}
        self._visiting: set[str] = set()

    def resolve(self, link: Link) -> Item | None:
        """The item a link names, preferring the kind the relation implies (a base model is a model)."""
        found = self._by_name.get(link.target, [])
        preferred = [i for i in found if i.kind == PREFERRED_KIND[link.relation]]
        return (preferred or found or [None])[0]

    def inherited(self, item: Item) -> list[Inherited]:
        """Every term that reaches ``item`` through its links, with the chain it came along."""
        if item.id in self._memo:
            return self._memo[item.id]
        if len(self._visiting) > MAX_LINEAGE_DEPTH:
            raise InputError(
                f"the lineage above {item.name} runs more than {MAX_LINEAGE_DEPTH} links deep; "
                "check the base_model/datasets entries of the cards, manifests and records given"
            )
        self._visiting.add(item.id)
        out: dict[tuple, Inherited] = {}
        for link in item.links:
            parent = self.resolve(link)
            if parent is None:
                continue  # reported as an unresolved link by the audit
            if parent.id in self._visiting:
                chain = (item.name, parent.name)
                self._cycles.setdefault(item.id, []).append(
                    Conflict("cycle", f"lineage loops back: {' <- '.join(chain)} is already an ancestor", chain, None)
                )
                continue
            allowed = self.kb.propagation[link.relation]
            terms = self.own_terms.get(parent.id)
            if terms is None:
                found = [Inherited(None, (item.name, parent.name), (link.relation,))]
            else:
                found = [
                    Inherited(t, (item.name, parent.name), (link.relation,)) for t in terms if t.obligation in allowed
                ]
            for above in self.inherited(parent):
                if above.term is None or above.term.obligation in allowed:
                    found.append(Inherited(above.term, (item.name, *above.chain), (link.relation, *above.relations)))
            for entry in found:
                out.setdefault((entry.term, entry.chain), entry)
        self._visiting.discard(item.id)
        result = sorted(out.values(), key=lambda i: (len(i.chain), i.chain, str(i.term)))
        self._memo[item.id] = result
        return result

    def conflicts(self, item: Item) -> list[Conflict]:
        """Licence conflicts along the lineage that no use case excuses."""
        found = list(self._cycles.get(item.id, []))
        own = self.own_terms.get(item.id)
        for entry in self.inherited(item):
            term = entry.term
            if term is None:
                continue
            origin = f"{entry.chain[-1]} ({term.license})"
            if entry.derivative_only and term.obligation == "no-derivatives":
                message = f"{item.name} is an adaptation of {origin}, whose licence forbids sharing adapted material"
                found.append(Conflict("no-derivatives", message, entry.chain, term))
            if (
                own is not None
                and entry.derivative_only
                and term.obligation in self.kb.must_carry
                and term.obligation not in {t.obligation for t in own}
            ):
                message = (
                    f"{item.name} is licensed without {term.obligation}, but it is derived from {origin}, "
                    f"whose {term.obligation} terms must carry over to derivatives"
                )
                found.append(Conflict("restriction-dropped", message, entry.chain, term))
            prefix = self.kb.licenses[term.license].naming_prefix if term.license in self.kb.licenses else None
            if term.obligation == "naming-requirement" and item.kind == Kind.MODEL and prefix:
                if not follows_naming_rule(item.name, prefix):
                    message = f"{item.name} is made with {origin}, so a shared version must be named '{prefix} ...'"
                    found.append(Conflict("naming", message, entry.chain, term))
        return found
