"""Every platform fact that blocks a request, not just the first, as uv's and mamba's reports list them.

The resolver stops at one conflict: for paddlepaddle-gpu 3.3 on Python 3.8 with driver 440 that is
Python, and the driver shows up only once Python has moved. So the blocking fact is moved to the
lowest value its requirements accept and the request resolved again, until it fits or what blocks
it is not the platform. Each value reported got past its conflict when resolved again; the values
per build, and all of them together, are reported only where a resolution with them fits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .model import Candidate, Req, is_platform
from .platform import FACTS, TAG_FACTS
from .resolver import TRIAL_ROUNDS, Context, Undecided, Unsatisfiable, resolve

MAX_STEPS = 2 * len(FACTS)
"""A fact can move more than once (a second claim on the driver asks more than the first)."""


@dataclass(frozen=True)
class Option:
    """One way past a blocking fact: ``value`` (the lowest that fits) for ``candidate``, which requires ``need``."""

    value: object
    candidate: Candidate | None
    need: Req


@dataclass(frozen=True)
class Blocker:
    """A platform fact in the way, with what would fit: one option per build of the package asking, lowest first."""

    fact: str
    options: list[Option]


@dataclass(frozen=True)
class Blockers:
    """The facts in the order found, and the values of all of them together with which the request fits."""

    found: list[Blocker]
    together: dict[str, object] | None


def platform_blockers(ctx: Context, roots: list[Req]) -> Blockers:
    """Move one blocking fact at a time until ``roots`` fit; ``together`` is None when moving the platform is not enough."""
    moved: dict[str, object] = {}
    asked: dict[str, tuple[Req, Candidate | None]] = {}
    for _ in range(MAX_STEPS):
        trial = _moved(ctx, moved)
        try:
            resolve(trial.matrix, trial.platform, roots, trial.prefer, trial.options, TRIAL_ROUNDS)
        except Undecided:
            break
        except Unsatisfiable as failure:
            step = _next_move(trial, failure.causes)
            if step is None or moved.get(step[0]) == step[1]:
                break
            moved[step[0]] = step[1]
            asked[step[0]] = step[2]
            continue
        found = [Blocker(f"__{key}", _options(ctx, roots, moved, key, *asked[key])) for key in moved]
        together = {b.fact[2:]: b.options[0].value for b in found}
        return Blockers(found, together if _moved(ctx, together).fits(roots) else moved)
    found = [Blocker(f"__{key}", [Option(value, asked[key][1], asked[key][0])]) for key, value in moved.items()]
    return Blockers(found, None)


def _moved(ctx: Context, values: dict[str, object]) -> Context:
    return replace(ctx, platform=ctx.platform.with_overrides(values)) if values else ctx


def _next_move(ctx: Context, causes: list[tuple[Req, Candidate | None]]):
    """(fact key, value, (requirement, requirer)): the first platform fact of the conflict the platform fails,
    at the lowest value one of its failed requirements accepts; None when no such fact can move."""
    for name in dict.fromkeys(req.name for req, _ in causes if is_platform(req.name)):
        fact = ctx.platform.get(name)
        failed = [(req, parent) for req, parent in causes if req.name == name and not (fact and req.admits(fact))]
        moves = [(value, pair) for pair in failed if (value := _lowest(ctx, [pair[0]])) is not None]
        if moves:
            value, pair = min(moves, key=lambda move: _order(move[0]))
            return name[2:], value, pair
    return None


def _lowest(ctx: Context, needs: list[Req]) -> object | None:
    """The lowest value of their fact that every one of ``needs`` accepts (a feature is added to those there)."""
    name = needs[0].name
    key = name[2:]
    if key in TAG_FACTS:
        tags = set.intersection(*(set(n.tags) for n in needs))
        if not tags:
            return None
        tag = min(tags)
        return sorted({*ctx.platform.values().get("cpu", []), tag}) if key == "cpu" else tag
    bounds = {s.version for n in needs for spec in n.specifiers for s in spec if s.operator in (">=", "==", "~=")}
    for bound in sorted((b for b in bounds if _version(b) is not None), key=_version):
        fact = ctx.platform.with_overrides({key: bound}).get(name)
        if all(n.admits(fact) for n in needs):
            return bound
    return None


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None  # a wildcard (==3.9.*) is no value a fact can take


def _order(value: object) -> tuple:
    """Versions in order; feature and OS values (one option each) after them."""
    version = _version(value) if isinstance(value, str) else None
    return (0, version) if version is not None else (1, str(value))


def _options(
    ctx: Context, roots: list[Req], moved: dict, key: str, need: Req, parent: Candidate | None
) -> list[Option]:
    """What each build of the package that asked for the fact needs of it (at that version), where it then fits."""
    fallback = [Option(moved[key], parent, need)]
    if parent is None or key in TAG_FACTS or parent.name not in ctx.matrix.packages:
        return fallback
    requested = any(r.name == parent.name and r.origin != "installed" for r in roots)
    found = []
    for build in (c for c in ctx.matrix.candidates(parent.name) if c.version == parent.version):
        needs = [r for r in _moved(ctx, moved).dependencies(build) if r.name == need.name]
        value = _lowest(ctx, needs) if needs else None
        if value is None:
            continue
        narrowed = roots
        if requested:  # ask for this build, so that the resolution verifies it and not another
            pin = Req(
                build.name,
                (SpecifierSet(f"=={build.version}"),),
                frozenset({build.build} if build.build else ()),
                text=build.pin(),
            )
            narrowed = [r for r in roots if r.name != build.name] + [replace(pin, origin="requested")]
        if _moved(ctx, {**moved, key: value}).fits(narrowed):
            deciding = next((r for r in needs if _lowest(ctx, [r]) == value), needs[0])
            found.append(Option(value, build, deciding))
    return sorted(found, key=lambda option: _order(option.value)) or fallback
