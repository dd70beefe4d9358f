"""The matrix's vocabulary: sources, claims, requirements and candidates.

A candidate is one installable thing (a package version and build, or a platform fact such as
the driver version); a requirement is what a claim says a candidate needs. Platform facts are
virtual packages named ``__python``, ``__driver`` ...; mutually exclusive groups (the ``paddle``
module that several builds provide, a known breakage between two packages) are virtual packages
named ``@...`` with one candidate per side, so the resolver can pick at most one side.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import cached_property

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

KINDS = ("declared", "tested", "reported")
"""How a claim is known: the publisher declared it, someone tested it, or users reported it."""

ZERO = Version("0")
_FAST_OPS = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


def _plain(version: Version) -> bool:
    """A release without pre, post, dev or local parts: PEP 440 comparisons are then plain ones."""
    return not (version.pre or version.post is not None or version.dev is not None or version.local)


def is_platform(name: str) -> bool:
    return name.startswith("__")


def is_slot(name: str) -> bool:
    return name.startswith("@")


def canonical(name: str) -> str:
    """PEP 503 normal form, keeping the ``__`` prefix of platform facts."""
    if is_platform(name):
        return "__" + canonicalize_name(name[2:])
    return name if is_slot(name) else canonicalize_name(name)


@dataclass(frozen=True)
class Source:
    """Where a claim comes from: a document or URL, and its date."""

    key: str
    title: str
    url: str
    date: str
    note: str = ""

    def cite(self) -> str:
        return f"{self.title} ({self.date})"


@dataclass(frozen=True, eq=False)
class Req:
    """``name[tags] specifier ; marker``: tags are build or feature names, any one of which will do.

    ``specifiers`` holds alternatives (any one may match): one for a plain requirement, several
    when disagreeing claims are merged under the lenient policy.
    """

    name: str
    specifiers: tuple[SpecifierSet, ...]
    tags: frozenset[str] = frozenset()
    marker: Marker | None = None
    text: str = ""
    origin: str = ""  # requested / installed / profile (the user's or the profile's); extra (what X[extra] adds)
    claims: tuple[Claim, ...] = ()

    def admits(self, candidate: Candidate) -> bool:
        if self.tags and not (self.tags & candidate.tags):
            return False
        for spec, clauses in self._compiled:
            if clauses is not None and candidate.plain:
                if all(op(candidate.version, bound) for op, bound in clauses):
                    return True
            elif spec.contains(candidate.version, prereleases=True):
                return True
        return False

    @cached_property
    def _compiled(self) -> list[tuple[SpecifierSet, list | None]]:
        """Each specifier set as plain comparisons where PEP 440 allows (the resolver's hot path:
        SpecifierSet.contains is ~10x slower), or None to fall back to packaging."""
        compiled = []
        for spec in self.specifiers:
            clauses: list | None = []
            for clause in spec:
                bound = None if "*" in clause.version or clause.operator not in _FAST_OPS else Version(clause.version)
                if bound is None or not _plain(bound):
                    clauses = None
                    break
                clauses.append((_FAST_OPS[clause.operator], bound))
            compiled.append((spec, clauses))
        return compiled

    def applies(self, env: dict[str, str]) -> bool:
        return self.marker is None or self.marker.evaluate(env)

    def spec_text(self) -> str:
        """The version part as a person writes it: ``>=3.0,<3.1`` (alternatives joined by ``|``)."""
        texts = [str(spec) for spec in self.specifiers]
        return " | ".join(t or "*" for t in texts) if len(texts) > 1 else (texts[0] or "")

    def __str__(self) -> str:
        if self.text:
            return self.text
        tags = f"[{','.join(sorted(self.tags))}]" if self.tags else ""
        return f"{self.name}{tags}{self.spec_text()}"


@dataclass(frozen=True)
class Claim:
    """One sourced statement: a candidate requires ``req``, according to ``source`` (of ``kind``)."""

    req: Req
    source: Source
    kind: str
    where: str
    note: str = ""


@dataclass(frozen=True, eq=False)
class Candidate:
    """One installable version and build of a package, or one platform fact."""

    name: str
    version: Version
    build: str = ""
    tags: frozenset[str] = frozenset()
    claims: tuple[Claim, ...] = ()
    info: tuple[tuple[str, str], ...] = ()  # build facts: cudnn, tensorrt, index, pin ...
    label: str = ""  # the version as written (driver 535.104.05 keeps its zero)
    where: str = ""
    extras: tuple[tuple[str, tuple[Claim, ...]], ...] = ()  # extra name -> what `name[extra]` adds; in tags too

    def extra_claims(self, extra: str) -> tuple[Claim, ...]:
        """What asking for ``name[extra]`` adds to this candidate's own requirements (none if undefined)."""
        return dict(self.extras).get(extra, ())

    @cached_property
    def key(self) -> tuple[str, Version, str]:
        return (self.name, self.version, self.build)

    @cached_property
    def plain(self) -> bool:
        return _plain(self.version)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def shown_version(self) -> str:
        if self.version == ZERO and self.tags:
            return ",".join(sorted(self.tags))
        return self.label or str(self.version)

    def pin(self) -> str:
        """The requirement that selects exactly this candidate."""
        tags = f"[{self.build}]" if self.build else ""
        return f"{self.name}{tags}=={self.version}"

    def __str__(self) -> str:
        build = f" [{self.build}]" if self.build else ""
        return f"{self.name} {self.shown_version}{build}"


@dataclass
class Package:
    """A package of the matrix and every candidate it has, newest first."""

    name: str
    dataset: str
    where: str
    provides: str = ""
    description: str = ""
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def versions(self) -> list[Version]:
        """Distinct versions, oldest first."""
        return sorted({c.version for c in self.candidates})


@dataclass(frozen=True)
class Breakage:
    """A known breakage: candidates admitted by ``sides[0]`` do not work with those admitted by ``sides[1]``."""

    id: str
    sides: tuple[Req, Req]
    reason: str
    source: Source
    kind: str
    where: str


def parse_requirement(text: str, origin: str = "") -> Req:
    """Parse ``name[tags] spec ; marker``; platform facts keep their ``__`` prefix, modules their ``@``.

    Raises ValueError with the problem and the expected form; callers add the file and line.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a requirement must be a non-empty string, got {text!r}")
    text = text.strip()
    prefix = next((p for p in ("__", "@") if text.startswith(p)), "")
    body = text[len(prefix) :]
    try:
        parsed = Requirement(body)
    except InvalidRequirement as exc:
        detail = str(exc).splitlines()[0]
        raise ValueError(
            f"invalid requirement {text!r} ({detail}); write it like 'paddlepaddle-gpu[cu126]>=3.0,<3.1'"
        ) from None
    if parsed.url:
        raise ValueError(f"requirement {text!r} has a URL; the matrix only holds names and version ranges")
    name = canonical(prefix + parsed.name)
    return Req(
        name=name,
        specifiers=(parsed.specifier,),
        tags=frozenset(parsed.extras),
        marker=parsed.marker,
        text=text,
        origin=origin,
    )


def parse_version(text: object) -> Version:
    """A PEP 440 version, or ValueError saying what was wrong."""
    try:
        return Version(str(text))
    except InvalidVersion:
        raise ValueError(f"invalid version {text!r}; write it like '3.0.0' or '550.54.14'") from None
