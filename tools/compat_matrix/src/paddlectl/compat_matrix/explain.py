"""Conflict explanations people can act on: a tree, "Because ..." sentences, verified fixes.

resolvelib reports the requirements that could not be met together. We group them by the
name they conflict on, show how each got there (a chain back to what was asked for), compress
the versions that behave alike into ranges, and then try concrete changes (another build,
another version range, a newer driver, the lenient policy); a fix is printed only if the
resolution then succeeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .blockers import Blocker, platform_blockers
from .model import Candidate, Claim, Req, is_platform, is_slot
from .platform import FACTS, TAG_FACTS
from .resolver import Context, Options, Unsatisfiable

MAX_FIXES = 5
MAX_DEPTH = 6


@dataclass
class Node:
    """One line of the explanation tree."""

    label: str
    children: list[Node] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"label": self.label, "children": [c.to_dict() for c in self.children]}


@dataclass
class Explanation:
    """Why something does not fit, and what would make it fit."""

    tree: list[Node]
    sentences: list[str]
    fixes: list[str]
    notes: list[str]
    blockers: list[str] = field(default_factory=list)  # every platform fact in the way, when more than one is

    def to_dict(self) -> dict:
        return {
            "tree": [n.to_dict() for n in self.tree],
            "because": self.sentences,
            "blockers": self.blockers,
            "fixes": self.fixes,
            "notes": self.notes,
        }


# -- version ranges -------------------------------------------------------------------------------


def compress(known: list[Version], chosen: set[Version]) -> list[str]:
    """Specifiers covering exactly ``chosen`` among ``known``: runs of adjacent versions become ranges."""
    ordered = sorted(set(known))
    specs, i = [], 0
    while i < len(ordered):
        if ordered[i] not in chosen:
            i += 1
            continue
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] in chosen:
            j += 1
        first, last, after = i == 0, j == len(ordered) - 1, ordered[j + 1] if j + 1 < len(ordered) else None
        if first and last:
            specs.append("")
        elif i == j:
            specs.append(f"=={ordered[i]}")
        elif first:
            specs.append(f"<{after}")
        elif last:
            specs.append(f">={ordered[i]}")
        else:
            specs.append(f">={ordered[i]},<{after}")
        i = j + 1
    return specs


def ranged(name: str, specs: list[str], build: str = "") -> str:
    tag = f" [{build}]" if build else ""
    if specs == [""]:
        return f"every {name}{tag}"
    return " or ".join(f"{name}{s}{tag}" for s in specs)


def _range_req(name: str, specs: list[str], tags: frozenset[str] = frozenset(), origin: str = "requested") -> Req:
    return Req(name, tuple(SpecifierSet(s) for s in specs), tags, text="", origin=origin)


# -- describing who wants what ------------------------------------------------------------------------


def _same_requirement(ctx: Context, candidate: Candidate, req: Req) -> bool:
    key = (req.name, req.tags, req.spec_text())
    return any((d.name, d.tags, d.spec_text()) == key for d in ctx.dependencies(candidate))


def who(ctx: Context, req: Req, parent: Candidate | None) -> str:
    """The subject of a sentence: ``you asked for X``, or the versions of a package that require ``req``."""
    if parent is None:
        return {
            "requested": f"you asked for {req}",
            "installed": f"the installed {req}" if req.spec_text() else f"the installed {req.name} (kept)",
            "profile": f"the profile requires {req}",
        }.get(req.origin, f"the request {req}")
    if is_slot(parent.name):
        return f"module {parent.name[1:]} {parent.shown_version} (from {parent.build})"
    if parent.where == "unlisted":
        return str(parent)
    same = {
        c.version
        for c in ctx.matrix.candidates(parent.name)
        if c.build == parent.build and _same_requirement(ctx, c, req)
    }
    known = [c.version for c in ctx.matrix.candidates(parent.name) if c.build == parent.build]
    return ranged(parent.name, compress(known, same or {parent.version}), parent.build)


def _req_text(req: Req) -> str:
    if req.name.startswith("@break:"):
        return f"the {req.name[7:]} breakage rule"
    if is_slot(req.name) and req.text.startswith("module "):
        return f"module {req.name[1:]}"
    if is_slot(req.name):
        return f"module {req.name[1:]}{req.spec_text()}"
    return str(req)


def _provides(req: Req) -> bool:
    """The requirement a provider makes on its own module (``@paddle[paddlepaddle-gpu]==3.0.0``)."""
    return is_slot(req.name) and not req.name.startswith("@break:") and bool(req.tags)


def _cite(claims: tuple[Claim, ...]) -> str:
    return "; ".join(f"{c.kind}: {c.source.cite()}" for c in claims)


def _chain(ctx: Context, parent: Candidate | None, trail: dict, seen: set) -> list[Node]:
    """How ``parent`` came to be in the resolution: the requirements that brought it, back to the root."""
    if parent is None or parent.key in seen or len(seen) >= MAX_DEPTH:
        return []
    seen = seen | {parent.key}
    nodes = []
    for req, grand in trail.get(parent.name, []):
        if req.admits(parent):
            nodes.append(
                Node(
                    f"{who(ctx, req, grand)}" + (f" requires {_req_text(req)}" if grand else ""),
                    _chain(ctx, grand, trail, seen),
                )
            )
    return nodes[:3]


# -- the explanation -----------------------------------------------------------------------------------


def explain(ctx: Context, failure: Unsatisfiable, roots: list[Req]) -> Explanation:
    """Tree, sentences, notes and verified fixes for a failed resolution of ``roots``."""
    groups: dict[str, list[tuple[Req, Candidate | None]]] = {}
    for req, parent in failure.causes:
        if (req, parent) not in groups.setdefault(req.name, []):
            groups[req.name].append((req, parent))
    tree, sentences, notes = [], [], []
    for name, pairs in groups.items():
        children = []
        for req, parent in pairs:
            if parent is None:
                label = who(ctx, req, parent)
            elif _provides(req):
                label = f"{parent} provides module {req.name[1:]}"
            else:
                label = f"{who(ctx, req, parent)} requires {_req_text(req)}"
            if req.claims:
                label += f"  ({_cite(req.claims)})"
            children.append(Node(label, _chain(ctx, parent, failure.trail, set())))
        if is_platform(name):
            children.append(Node(ctx.platform.describe(name)))
        tree.append(Node(f"conflict on {_subject(name)}", children))
        sentences += _sentences(ctx, name, pairs)
        notes += _disagreements(ctx, pairs)
    fixes, blockers = find_fixes(ctx, groups, roots), []
    if any(is_platform(name) for name in groups):
        found = platform_blockers(ctx, roots)
        if len(found.found) > 1:  # one alone is said by its fix; several are listed, as uv and mamba do
            blockers = [_blocker_text(ctx, blocker) for blocker in found.found]
            if found.together is not None:
                needs = {b.fact[2:]: b.options[0].need for b in found.found}
                wanted = [f"{_label(k)} {_fitting(k, v, needs[k])}" for k, v in found.together.items()]
                fixes.insert(0, f"change all of these, then it fits: {', '.join(wanted)}")
    return Explanation(tree, sentences, fixes[:MAX_FIXES], list(dict.fromkeys(notes)), blockers)


def _fitting(key: str, value: object, need: Req) -> str:
    """``>=520.61.05``, or ``one of avx`` for a feature or OS fact."""
    return f"one of {', '.join(sorted(need.tags))}" if key in TAG_FACTS else f">={value}"


def _blocker_text(ctx: Context, blocker: Blocker) -> str:
    """``NVIDIA driver version >=520.61.05 for the cu118 build, >=560.28.03 for the cu126 build (target has
    __driver 440.33): every paddlepaddle-gpu [cu118] requires __driver>=520.61.05``."""
    key, first = blocker.fact[2:], blocker.options[0]
    per_build = len({str(o.value) for o in blocker.options}) > 1
    values = [
        _fitting(key, o.value, o.need) + (f" for the {o.candidate.build} build" if per_build and o.candidate else "")
        for o in blocker.options
    ]
    requirer = f"{who(ctx, first.need, first.candidate)} requires {first.need}"
    return f"{_label(key)} {', '.join(values)} ({ctx.platform.describe(blocker.fact)}): {requirer}"


def _label(key: str) -> str:
    """The fact's name without its examples: ``CPU features``."""
    return FACTS[key].split(" (")[0]


def _cannot(subject: str) -> str:
    """``X cannot be installed``, or ``no X can be installed`` when the subject is every X."""
    return f"no {subject[6:]} can be installed" if subject.startswith("every ") else f"{subject} cannot be installed"


def _subject(name: str) -> str:
    if name.startswith("@break:"):
        return f"known breakage {name[7:]}"
    if is_slot(name):
        return f"module {name[1:]} (one provider at a time)"
    if is_platform(name):
        return f"{name} ({FACTS.get(name[2:], '')})"
    return name


def _sentences(ctx: Context, name: str, pairs: list[tuple[Req, Candidate | None]]) -> list[str]:
    subjects = [(req, parent, who(ctx, req, parent)) for req, parent in pairs]
    if is_platform(name):
        fact = ctx.platform.get(name)
        out = []
        for req, parent, subject in subjects:
            if fact is None or not req.admits(fact):
                target = ctx.platform.origin
                thing = subject if parent is not None else req.name
                verb = f"{subject} requires {req}" if parent is not None else subject
                out.append(f"Because {verb} and {ctx.platform.describe(name)}, {_cannot(thing)} on {target}.")
        return out
    if name.startswith("@break:"):
        breakage = next(b for b in ctx.matrix.breakages if b.id == name[7:])
        sides = " and ".join(str(s) for s in breakage.sides)
        return [
            f"Because {sides} are known not to work together ({breakage.reason}; {breakage.kind}: "
            f"{breakage.source.cite()}), they cannot be installed together."
        ]
    if is_slot(name):
        providers = sorted({next(iter(r.tags)) for r, p, _ in subjects if r.tags and p is not None})
        if len(providers) > 1:
            return [
                f"Because {' and '.join(providers)} both provide the {name[1:]} module, they cannot be installed together."
            ]
        parts = [
            f"{p} provides {_req_text(r)}" if _provides(r) else f"{s} requires {_req_text(r)}" for r, p, s in subjects
        ]
        return [f"Because {' and '.join(parts)}, they cannot be installed together."]
    parts = [f"{s} requires {r}" if p is not None else s for r, p, s in subjects]
    fitting = [c for c in ctx.matrix.candidates(name) if all(r.admits(c) for r, _, _ in subjects)]
    if not fitting and len(subjects) == 1:
        known = ", ".join(str(v) for v in ctx.matrix.package(name).versions) if name in ctx.matrix.packages else "none"
        return [f"Because {parts[0]} and the matrix has no such {name} (known: {known}), it cannot be installed."]
    if not fitting:
        owners = " and ".join(s for _, _, s in subjects)
        return [
            f"Because {' and '.join(parts)}, no version of {name} satisfies them all: {owners} cannot be installed together."
        ]
    versions = compress(ctx.matrix.package(name).versions, {c.version for c in fitting})
    return [f"Because {' and '.join(parts)}, only {ranged(name, versions)} would do, and that conflicts elsewhere."]


def _disagreements(ctx: Context, pairs: list[tuple[Req, Candidate | None]]) -> list[str]:
    notes = []
    for req, parent in pairs:
        if parent is None or is_slot(parent.name):
            continue
        for group in ctx.matrix.disagreements(parent):
            if group[0].req.name != req.name:
                continue
            said = "; ".join(f"{c.req} ({c.kind}: {c.source.cite()})" for c in group)
            notes.append(
                f"sources disagree for {parent}: {said}. The {ctx.options.policy} policy "
                + ("applies every claim." if ctx.options.policy == "strict" else "accepts any one of them.")
            )
    return notes


# -- fixes ------------------------------------------------------------------------------------------------


def find_fixes(ctx: Context, groups: dict[str, list[tuple[Req, Candidate | None]]], roots: list[Req]) -> list[str]:
    """Concrete changes that make the resolution succeed, each verified by resolving again."""
    fixes: list[str] = []

    def add(text: str) -> None:
        if text not in fixes and len(fixes) < MAX_FIXES:
            fixes.append(text)

    requested = {r.name: r for r in roots if r.origin in ("requested", "profile")}
    kept = {r.name for r in roots if r.origin == "installed"}
    for name, pairs in groups.items():
        involved = [p for _, p in pairs if p is not None and not is_slot(p.name)]
        involved += [ctx.matrix.packages[p.build] for _, p in pairs if p is not None and is_slot(p.name) and p.build]
        names = list(dict.fromkeys(p.name for p in involved))
        for req, parent in pairs:
            if parent is None and req.name in requested:
                names.append(req.name)
        for package in dict.fromkeys(names):
            if package in requested:
                for text in _other_builds(ctx, requested[package], roots):
                    add(text)
                text = _other_request(ctx, requested[package], roots)
            elif package in kept:
                text = _drop_installed(ctx, package, roots)
            else:
                text = None
            if text:
                add(text)
        if is_platform(name):
            for req, _ in pairs:
                text = _platform_fix(ctx, name, req, roots)
                if text:
                    add(text)
    if ctx.options.policy == "strict":
        lenient = replace(ctx, options=Options("lenient", ctx.options.kinds))
        if lenient.fits(roots):
            add(
                "it fits if disagreeing sources may be read leniently (--policy lenient); check which source applies to you"
            )
    if set(ctx.options.kinds) != {"declared"}:
        declared = replace(ctx, options=Options(ctx.options.policy, ("declared",)))
        if declared.fits(roots):
            add("it fits if only declared claims count (--kinds declared): the blocker is a tested or reported claim")
    return fixes


def _replace_root(roots: list[Req], new: Req) -> list[Req]:
    return [r for r in roots if r.name != new.name] + [new]


def _other_builds(ctx: Context, request: Req, roots: list[Req]) -> list[str]:
    """Other builds (CUDA variants) of a requested package at the versions asked for."""
    out = []
    for cand in ctx.matrix.candidates(request.name):
        if (
            cand.build
            and cand.build not in request.tags
            and any(s.contains(cand.version, prereleases=True) for s in request.specifiers)
        ):
            if ctx.fits(_replace_root(roots, _range_req(request.name, [f"=={cand.version}"], frozenset({cand.build})))):
                out.append(f"use the {cand.build} build: {cand.pin()}")
    return out[:2]


def _fitting_versions(ctx: Context, name: str, roots: list[Req], build: str = "", skip: set | None = None) -> set:
    """Versions of ``name`` (of ``build``, when given) that fit when asked for instead of ``roots``' own."""
    fitting: set = set()
    tags = frozenset({build}) if build else frozenset()
    for cand in ctx.matrix.candidates(name)[:40]:
        if cand.version in fitting or cand.version in (skip or set()) or (build and cand.build != build):
            continue
        if ctx.fits(_replace_root(roots, _range_req(name, [f"=={cand.version}"], tags))):
            fitting.add(cand.version)
    return fitting


def _suggest(ctx: Context, name: str, fitting: set, build: str = "") -> str:
    known = [c.version for c in ctx.matrix.candidates(name) if not build or c.build == build]
    specs = [s for s in compress(known, fitting) if s]
    verb = "keep" if specs and all(s.startswith("<") for s in specs) else "use"
    return f"{verb} {ranged(name, specs or [''], build)}"


def _other_request(ctx: Context, req: Req, roots: list[Req]) -> str | None:
    """The versions of a requested package that would fit, to ask for instead."""
    if req.name not in ctx.matrix.packages:
        return None
    fitting = _fitting_versions(ctx, req.name, roots)
    if not fitting:
        return None
    return f"{_suggest(ctx, req.name, fitting)} instead of {req}"


def _platform_fix(ctx: Context, name: str, req: Req, roots: list[Req]) -> str | None:
    fact = ctx.platform.get(name)
    if fact is not None and req.admits(fact):
        return None
    label = FACTS.get(name[2:], name)
    if req.tags:
        return f"needs {label}: one of {', '.join(sorted(req.tags))} ({ctx.platform.describe(name)})"
    lows = [s.version for spec in req.specifiers for s in spec if s.operator in (">=", "==", "~=")]
    text = f"{label} {req.spec_text()} needed ({ctx.platform.describe(name)})"
    if not lows:
        return text
    moved = replace(ctx, platform=ctx.platform.with_overrides({name[2:]: min(lows, key=Version)}))
    return text if moved.fits(roots) else text + "; not enough on its own"


def _drop_installed(ctx: Context, name: str, roots: list[Req]) -> str | None:
    """Uninstalling an installed package that is in the way, if the rest then fits."""
    if not ctx.fits([r for r in roots if not (r.name == name and r.origin == "installed")]):
        return None
    module = ctx.matrix.packages[name].provides if name in ctx.matrix.packages else ""
    return f"uninstall {name} first" + (f": it provides the {module} module too" if module else ": the rest then fits")
