"""Licence normalisation: every way a licence is written, turned into one SPDX expression or UNKNOWN.

Built on ``license-expression`` with the SPDX list plus ScanCode's LicenseRef keys (for licences
SPDX lacks) and this package's own ``LicenseRef-paddlectl-*`` ids. Free-text names, Hugging Face
ids and trove classifiers go through exact curated tables (``data/aliases.yaml``); anything else,
and anything ambiguous, comes back as UNKNOWN with the reason. Nothing is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import license_expression
from license_expression import ExpressionError, Licensing

from .kb import KnowledgeBase, load_knowledge_base
from .resources import load_data
from .textmatch import identify_text

UNKNOWN = "UNKNOWN"
PLACEHOLDERS = {"", "unknown", "other", "noassertion", "none", "n/a", "na", "proprietary", "see license", "license.txt"}
"""Values that say a licence exists without naming it."""


@dataclass(frozen=True)
class Normalized:
    """The result of reading one licence statement."""

    expression: str | None
    method: str
    note: str

    @property
    def known(self) -> bool:
        return self.expression is not None

    def __str__(self) -> str:
        return self.expression or UNKNOWN


@dataclass(frozen=True)
class Leaf:
    """One licence in an expression, possibly modified by an exception (``X WITH E``)."""

    license: str
    exception: str | None = None

    def __str__(self) -> str:
        return f"{self.license} WITH {self.exception}" if self.exception else self.license


@dataclass(frozen=True)
class Op:
    """``AND`` (all terms apply) or ``OR`` (a choice) over sub-expressions."""

    op: str
    children: tuple[Leaf | Op, ...]

    def __str__(self) -> str:
        return f" {self.op} ".join(f"({c})" if isinstance(c, Op) else str(c) for c in self.children)


Node = Leaf | Op

_SPACE = re.compile(r"\s+")


def _key(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class Normalizer:
    """Reads licence statements; results are cached, so auditing thousands of items stays cheap."""

    def __init__(self, kb: KnowledgeBase | None = None) -> None:
        self.kb = kb or load_knowledge_base()
        index = license_expression.get_license_index()
        known = {entry.get("spdx_license_key") for entry in index}
        index += [
            {"spdx_license_key": key, "other_spdx_license_keys": [], "is_exception": False}
            for key in self.kb.licenses
            if key not in known
        ]
        self.licensing: Licensing = license_expression.build_spdx_licensing(index)
        raw = load_data("aliases.yaml")
        self._huggingface = {_key(k): v for k, v in raw["huggingface"].items()}
        self._names = {_key(k): v for k, v in raw["names"].items()}
        self._classifiers = {_key(k): v for k, v in raw["classifiers"].items()}
        self._ambiguous = {_key(k): v for k, v in raw["ambiguous"].items()}
        self.normalize = cache(self._normalize)
        self.classifier = cache(self._classifier)
        self.parse = cache(self._parse)

    def _expression(self, text: str, method: str, note: str) -> Normalized:
        try:
            parsed = self.licensing.parse(text, validate=False, simple=False)
        except ExpressionError as exc:
            return Normalized(None, "none", f"{text!r} is not a licence expression ({exc})")
        if parsed is None:
            return Normalized(None, "none", "empty licence expression")
        unknown = self.licensing.unknown_license_keys(parsed)
        if unknown:
            names = ", ".join(sorted(map(str, unknown)))
            return Normalized(None, "none", f"{names} is in neither the SPDX list, ScanCode nor the knowledge base")
        return Normalized(str(parsed), method, note)

    def _normalize(self, text: str) -> Normalized:
        """A licence id, name or expression as written in metadata, a card or a manifest."""
        if not isinstance(text, str):
            return Normalized(None, "none", f"licence must be a string, found {type(text).__name__} {text!r}")
        key = _key(text)
        if key in PLACEHOLDERS:
            return Normalized(None, "none", f"the licence is given as {text.strip()!r}, which names no licence")
        if key in self._ambiguous:
            return Normalized(None, "none", f"{text.strip()!r} is ambiguous: {self._ambiguous[key]}")
        as_spdx = self._expression(text.strip(), "spdx", "an SPDX expression")
        if as_spdx.known:
            return as_spdx
        if key in self._names:
            return self._expression(self._names[key], "alias", f"the name {text.strip()!r}")
        if key in self._huggingface:
            return self._expression(self._huggingface[key], "huggingface", f"the Hugging Face id {text.strip()!r}")
        return as_spdx

    def _classifier(self, classifier: str) -> Normalized:
        """A ``License :: ...`` trove classifier."""
        key = _key(classifier)
        if key in self._ambiguous:
            return Normalized(None, "none", f"{classifier!r} is ambiguous: {self._ambiguous[key]}")
        if key in self._classifiers:
            return self._expression(self._classifiers[key], "classifier", f"the classifier {classifier!r}")
        return Normalized(None, "none", f"the classifier {classifier!r} is not in the classifier table")

    def licence_text(self, text: str) -> Normalized:
        """A whole licence text; several licences in one file all apply (AND)."""
        found = identify_text(text)
        if not found:
            return Normalized(None, "none", "the licence text matches no known licence text")
        note = "the licence text" if len(found) == 1 else f"a text holding {len(found)} licences, all applying"
        return self._expression(" AND ".join(found), "text", note)

    def _parse(self, expression: str) -> Node:
        """The tree of a normalised expression, for policy evaluation."""
        parsed = self.licensing.parse(expression, validate=False, simple=False)
        if parsed is None:
            raise ValueError("cannot parse an empty licence expression")
        return self._tree(parsed)

    def _tree(self, node) -> Node:
        if isinstance(node, license_expression.LicenseWithExceptionSymbol):
            return Leaf(node.license_symbol.key, node.exception_symbol.key)
        if isinstance(node, license_expression.LicenseSymbol):
            return Leaf(node.key)
        op = "AND" if isinstance(node, self.licensing.AND) else "OR"
        return Op(op, tuple(self._tree(arg) for arg in node.args))

    def leaves(self, expression: str) -> list[Leaf]:
        """Every licence an expression mentions, in order."""
        out: list[Leaf] = []
        stack: list[Node] = [self.parse(expression)]
        while stack:
            node = stack.pop()
            if isinstance(node, Leaf):
                out.append(node)
            else:
                stack.extend(reversed(node.children))
        return out


@cache
def default_normalizer() -> Normalizer:
    """One shared normaliser over the shipped knowledge base."""
    return Normalizer()
