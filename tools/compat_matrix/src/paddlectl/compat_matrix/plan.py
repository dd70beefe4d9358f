"""The questions people ask before upgrading: does it fit now, what must move, who needs this."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from packaging.specifiers import SpecifierSet

from .errors import UsageError, unknown_name
from .explain import Explanation, Node, explain, who
from .model import Candidate, Req, canonical, is_platform, is_slot
from .resolver import Context, Solution, Unsatisfiable

_ANY = SpecifierSet()


@dataclass(frozen=True)
class Change:
    """One row of a plan: ``old`` -> ``new`` (None for added or removed), and why."""

    name: str
    old: Candidate | None
    new: Candidate | None
    reason: str

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "old": None if self.old is None else self.old.pin(),
            "new": None if self.new is None else self.new.pin(),
            "reason": self.reason,
        }


@dataclass
class Plan:
    """The smallest set of changes found that makes the request fit, or why none does."""

    changes: list[Change]
    solution: Solution | None
    explanation: Explanation | None

    @property
    def fits(self) -> bool:
        return self.solution is not None

    def to_dict(self) -> dict:
        return {
            "fits": self.fits,
            "changes": [c.to_dict() for c in self.changes],
            "explanation": None if self.explanation is None else self.explanation.to_dict(),
        }


def validate_request(ctx: Context, reqs: list[Req]) -> None:
    """Every requested name must be a package of the matrix (platform facts change with --fact)."""
    for req in reqs:
        if is_platform(req.name) or is_slot(req.name):
            raise UsageError(f"{req.name} is not a package; change platform facts with --fact {req.name[2:]}=VALUE")
        if req.name not in ctx.matrix.packages:
            raise unknown_name("package", req.name, list(ctx.matrix.packages))


def _pin(candidate: Candidate) -> Req:
    tags = frozenset({candidate.build}) if candidate.build else frozenset()
    return Req(
        candidate.name, (SpecifierSet(f"=={candidate.version}"),), tags, text=candidate.pin(), origin="installed"
    )


def _changed(solution: Solution, installed: dict[str, Candidate]) -> int:
    new = solution.packages()
    return sum(1 for n in set(new) | set(installed) if new.get(n) != installed.get(n))


def plan(base: Context, installed: dict[str, Candidate], upgrades: list[Req]) -> Plan:
    """Resolve ``upgrades`` while keeping what is installed, then undo every change that is not needed.

    Installed packages stay (any version, the installed one preferred); one that provides the same
    module as an upgraded package (paddlepaddle when paddlepaddle-gpu is asked for) is replaced.
    Then each changed package whose installed version still meets what the plan requires of it
    is tried back at that version; a trial that fits with fewer changes is kept. So no single
    package the rest of the plan allows back stays changed.
    """
    validate_request(base, upgrades)
    ctx = replace(base, prefer=dict(installed))
    wanted = {r.name for r in upgrades}
    modules = {ctx.matrix.packages[n].provides: n for n in wanted if ctx.matrix.packages[n].provides}
    removed = {
        n: f"provides the {ctx.matrix.packages[n].provides} module, like {modules[ctx.matrix.packages[n].provides]}: uninstall it"
        for n in installed
        if n not in wanted and n in ctx.matrix.packages and ctx.matrix.packages[n].provides in modules
    }
    keep = [Req(n, (_ANY,), text=n, origin="installed") for n in installed if n not in wanted and n not in removed]
    roots = list(upgrades) + keep
    try:
        solution = ctx.resolve(roots)
    except Unsatisfiable as failure:
        return Plan([], None, explain(ctx, failure, roots))
    improved = True
    while improved:
        improved = False
        for name, new in sorted(solution.packages().items()):
            old = installed.get(name)
            if old is None or old == new or name in wanted or not _still_allowed(solution, name, old):
                continue
            trial = ctx.fits(roots + [_pin(old)])
            if trial is not None and _changed(trial, installed) < _changed(solution, installed):
                solution, roots, improved = trial, roots + [_pin(old)], True
                break
    return Plan(_changes(ctx, solution, installed, wanted, removed), solution, None)


def _still_allowed(solution: Solution, name: str, old: Candidate) -> bool:
    """Does ``old`` meet every requirement the pinned packages of ``solution`` make on ``name``?"""
    pinned = solution.mapping
    return all(
        req.admits(old)
        for req, parent in solution.requirers.get(name, [])
        if parent is None or pinned.get(parent.name) == parent
    )


def _changes(ctx: Context, solution: Solution, installed, wanted: set[str], removed: dict[str, str]) -> list[Change]:
    new = solution.packages()
    rows = []
    for name in sorted(set(new) | set(installed)):
        old, cand = installed.get(name), new.get(name)
        if old == cand:
            continue
        if name in wanted:
            reason = "requested"
        elif name in removed:
            reason = removed[name]
        else:
            why_ = [
                f"{who(ctx, req, parent)} requires {req}"
                for req, parent in solution.requirers.get(name, [])
                if parent is not None and (old is None or not req.admits(old))
            ]
            reason = "; ".join(dict.fromkeys(why_)) or "moves with the rest"
        rows.append(Change(name, old, cand, reason))
    return rows


# -- check ---------------------------------------------------------------------------------------------


@dataclass
class Check:
    """Whether the installed set is consistent: problems as sentences, and the plan that fixes them."""

    problems: list[str]
    tree: list[Node]
    fix: Plan | None

    @property
    def fits(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {
            "fits": self.fits,
            "problems": self.problems,
            "tree": [n.to_dict() for n in self.tree],
            "fix": None if self.fix is None else self.fix.to_dict(),
        }


def check(ctx: Context, installed: dict[str, Candidate], outside: Mapping[str, str] | None = None) -> Check:
    """Every requirement of every installed package, checked against what is installed and the platform.

    ``outside``: versions of the installed distributions the matrix does not hold (this machine's),
    against which an extra's third-party requirements are checked; None where they are unknown (a
    profile lists only matrix packages), and then those are not checked.
    """
    problems: list[str] = []
    tree: list[Node] = []
    provided = _provided_modules(ctx, installed)
    for cand in sorted(installed.values(), key=lambda c: c.name):
        lines = [
            text
            for req in ctx.dependencies(cand)
            if req.origin != "extra"  # what an extra adds is checked for the installed version, by _extras_gap
            and (text := _problem(ctx, cand, req, installed, provided, outside))
        ]
        if lines:
            tree.append(Node(str(cand), [Node(line) for line in lines]))
            problems += [line for line in lines if line not in problems]
    fix = plan(ctx, installed, []) if problems else None
    if fix is not None and fix.fits and not fix.changes:
        fix = None  # only what the matrix cannot move is missing (an extra's third-party requirement): the problem names it
    return Check(problems, tree, fix)


def _provided_modules(ctx: Context, installed: dict[str, Candidate]) -> dict[str, list[Candidate]]:
    found: dict[str, list[Candidate]] = {}
    for cand in installed.values():
        module = ctx.matrix.packages[cand.name].provides if cand.name in ctx.matrix.packages else ""
        if module:
            found.setdefault(f"@{module}", []).append(cand)
    return found


def _problem(ctx: Context, cand: Candidate, req: Req, installed, provided, outside) -> str | None:
    """A sentence saying why ``req`` of ``cand`` is not met here, or None when it is."""
    if is_platform(req.name):
        fact = ctx.platform.get(req.name)
        if fact is None or not req.admits(fact):
            return f"Because {cand} requires {req} and {ctx.platform.describe(req.name)}, {cand} cannot work there."
        return None
    if req.name.startswith("@break:"):
        breakage = next(b for b in ctx.matrix.breakages if b.id == req.name[7:])
        other = breakage.sides[1 - int(next(iter(req.tags)))]
        clash = [c for c in _side_members(ctx, other, installed, provided) if c.name != cand.name]
        if clash:
            return (
                f"Because {cand} and {clash[0]} are known not to work together ({breakage.reason}; "
                f"{breakage.kind}: {breakage.source.cite()}), they cannot be installed together."
            )
        return None
    if is_slot(req.name):
        providers = provided.get(req.name, [])
        if req.tags:  # cand provides this module: another provider is a clash
            others = sorted(str(p.name) for p in providers if p.name != cand.name)
            if others:
                return f"Because {cand.name} and {', '.join(others)} both provide the {req.name[1:]} module, they cannot be installed together."
            return None
        if not providers:
            return f"Because {cand} requires module {req.name[1:]}{req.spec_text()} and no installed package provides it, {cand} cannot work."
        if not any(
            req.spec_text() == "" or any(s.contains(p.version, prereleases=True) for s in req.specifiers)
            for p in providers
        ):
            found = ", ".join(str(p) for p in providers)
            return f"Because {cand} requires module {req.name[1:]}{req.spec_text()} and the installed {found} provides {req.name[1:]} {providers[0].shown_version}, {cand} cannot work."
        return None
    have = installed.get(req.name)
    if have is None:
        return f"Because {cand} requires {req} and {req.name} is not installed, {cand} cannot work."
    if not req.admits(have) and not have.build and replace(req, tags=frozenset()).admits(have):
        extras = ", ".join(sorted(req.tags))
        return f"Because {cand} requires {req} and the installed {have} defines no extra {extras}, {cand} cannot work."
    if not req.admits(have):
        return f"Because {cand} requires {req} and the installed {req.name} is {have.shown_version}{f' [{have.build}]' if have.build else ''}, {cand} cannot work."
    gap = _extras_gap(ctx, have, req, installed, outside, frozenset())
    if gap:
        return f"Because {cand} requires {req}, {', '.join(gap[:-1])}, and {gap[-1]}, {cand} cannot work."
    return None


def _extras_gap(ctx: Context, have: Candidate, req: Req, installed, outside, seen: frozenset) -> list[str] | None:
    """Why the installed ``have`` does not give what ``req``'s extras add, as a chain of clauses ending with
    the requirement that is missing or does not match (``whose onnx extra requires onnx<2,>=1.15``,
    ``onnx is not installed``); None when every extra's requirement is met. pip installs ``X[extra]``
    as X plus the extra's requirements, so X alone does not satisfy it."""
    env = ctx.platform.marker_env()
    for extra in sorted(req.tags):
        if (have.name, extra) in seen:
            continue  # an extra that asks for another extra of its own package (all = [a, b]) ends here
        for claim in have.extra_claims(extra):
            if claim.kind in ctx.options.kinds and claim.req.applies(env):
                gap = _unmet(ctx, claim.req, installed, outside, seen | {(have.name, extra)})
                if gap:
                    return [f"whose {extra} extra requires {claim.req}", *gap]
    return None


def _unmet(ctx: Context, need: Req, installed, outside, seen: frozenset) -> list[str] | None:
    """Why one requirement of an extra is not met here (a chain of clauses), or None when it is."""
    if is_platform(need.name):
        fact = ctx.platform.get(need.name)
        return None if fact is not None and need.admits(fact) else [ctx.platform.describe(need.name)]
    if need.name in ctx.matrix.packages:
        have = installed.get(need.name)
        if have is None:
            return [f"{need.name} is not installed"]
        if not need.admits(have):
            return [f"the installed {need.name} is {have.shown_version}"]
        return _extras_gap(ctx, have, need, installed, outside, seen)
    if outside is None:
        return None
    version = outside.get(need.name)
    if version is None:
        return [f"{need.name} is not installed"]
    if not any(spec.contains(version, prereleases=True) for spec in need.specifiers):
        return [f"the installed {need.name} is {version}"]
    return None


def _side_members(ctx: Context, side: Req, installed, provided) -> list[Candidate]:
    if is_slot(side.name):
        return [
            p
            for p in provided.get(side.name, [])
            if any(s.contains(p.version, prereleases=True) for s in side.specifiers)
        ]
    have = installed.get(side.name)
    return [have] if have is not None and side.admits(have) else []


# -- why ---------------------------------------------------------------------------------------------------


def why(ctx: Context, installed: dict[str, Candidate], name: str) -> Node:
    """What requires ``name`` among the installed packages, as a tree back to the top-level ones."""
    target = canonical(name)
    if not (is_platform(target) or target in ctx.matrix.packages):
        raise unknown_name("package", name, list(ctx.matrix.packages) + [f"__{k}" for k in ctx.platform.values()])
    if is_platform(target):
        fact = ctx.platform.get(target)
        root = Node(f"{target} {fact.shown_version}" if fact else ctx.platform.describe(target))
    elif target in installed:
        root = Node(str(installed[target]))
    else:
        root = Node(f"{target} (not installed)")
    root.children = _requirers(ctx, installed, target, {target})
    if not root.children:
        root.children = [Node("nothing installed requires it (top level)")]
    return root


def _requirers(ctx: Context, installed: dict[str, Candidate], target: str, seen: set[str]) -> list[Node]:
    have = installed.get(target) or (ctx.platform.get(target) if is_platform(target) else None)
    module = ctx.matrix.packages[target].provides if target in ctx.matrix.packages else ""
    names = {target} | ({f"@{module}"} if module else set())
    nodes = []
    for cand in sorted(installed.values(), key=lambda c: c.name):
        for req in ctx.dependencies(cand):
            if req.name not in names or req.tags and is_slot(req.name):
                continue
            if is_slot(req.name):
                ok = have is not None and any(s.contains(have.version, prereleases=True) for s in req.specifiers)
                label = f"{cand} requires module {module}{req.spec_text()} (provided by {target})"
            else:
                ok = have is not None and req.admits(have)
                label = f"{cand} requires {req}"
            label += "  ok" if ok else "  NOT MET"
            children = [] if cand.name in seen else _requirers(ctx, installed, cand.name, seen | {cand.name})
            nodes.append(Node(label, children))
    return nodes
