"""Resolution with resolvelib: a Provider over the matrix, the platform facts and the user's wishes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from resolvelib import BaseReporter, ResolutionImpossible, ResolutionTooDeep
from resolvelib.providers import AbstractProvider
from resolvelib.resolvers import Resolution

from .complete_search import OutOfBudget, complete_search
from .matrix import Matrix
from .model import KINDS, Candidate, Req, is_platform, is_slot
from .platform import Platform

MAX_ROUNDS = 20000
TRIAL_ROUNDS = 2000
"""Budget for "would this fix fit?" trials: one that cannot decide within it counts as no."""


@dataclass(frozen=True)
class Options:
    """How claims are read: ``policy`` for disagreeing sources, ``kinds`` for which claims count."""

    policy: str = "strict"
    kinds: tuple[str, ...] = KINDS


@dataclass
class Solution:
    """A consistent choice: one candidate per package, platform fact and exclusive group."""

    mapping: dict[str, Candidate]
    requirers: dict[str, list[tuple[Req, Candidate | None]]]

    def packages(self) -> dict[str, Candidate]:
        return {n: c for n, c in self.mapping.items() if not (is_platform(n) or is_slot(n))}


class Unsatisfiable(Exception):
    """No choice satisfies every requirement.

    ``causes`` is the conflict to explain: of every conflict the resolver hit while backtracking,
    the one it hit most often (resolvelib's final conflict is just the last branch it tried, often
    a side road such as another provider's build); ``trail`` says which requirement brought each name.
    """

    def __init__(
        self, causes: list[tuple[Req, Candidate | None]], trail: dict[str, list[tuple[Req, Candidate | None]]]
    ):
        super().__init__("no combination satisfies every requirement")
        self.causes = causes
        self.trail = trail


class Undecided(RuntimeError):
    """The resolver gave up before deciding (too many rounds of backtracking)."""


class _Trail(BaseReporter):
    """Remembers which requirement brought each name in, and every conflict met on the way."""

    def __init__(self) -> None:
        self.added: dict[str, list[tuple[Req, Candidate | None]]] = defaultdict(list)
        self.conflicts: list[list[tuple[Req, Candidate | None]]] = []

    def adding_requirement(self, requirement: Req, parent: Candidate | None) -> None:
        pair = (requirement, parent)
        if pair not in self.added[requirement.name]:
            self.added[requirement.name].append(pair)

    def resolving_conflicts(self, causes) -> None:
        self.conflicts.append([(info.requirement, info.parent) for info in causes])

    def main_conflict(self, final: list[tuple[Req, Candidate | None]]) -> list[tuple[Req, Candidate | None]]:
        """The conflict met most often (by names and requirements, whatever the versions tried)."""
        counts: dict[frozenset, int] = defaultdict(int)
        latest: dict[frozenset, list] = {}
        for causes in [*self.conflicts, final]:
            key = frozenset((r.name, r.spec_text(), r.tags, p.name if p else None) for r, p in causes)
            counts[key] += 1
            latest[key] = causes
        return latest[max(counts, key=lambda k: counts[k])]


class MatrixProvider(AbstractProvider):
    """resolvelib's view of the matrix: candidates newest first, or nearest the installed one."""

    def __init__(self, matrix: Matrix, platform: Platform, prefer: Mapping[str, Candidate], options: Options):
        self.matrix, self.platform, self.prefer, self.options = matrix, platform, prefer, options
        self.env = platform.marker_env()
        # (name, *requirements) -> the candidates they admit. resolvelib asks again each time a
        # requirement joins a name's list, so the answer for the list without the newest one is
        # usually here already and only the newest needs checking (requirements hash by identity).
        self._filtered: dict[tuple, list[Candidate]] = {}

    def identify(self, requirement_or_candidate: Req | Candidate) -> str:
        return requirement_or_candidate.name

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        # Facts have one candidate: decide them first. Modules and breakage sides last, once the
        # packages that provide them are pinned (deciding them early would try every provider's
        # builds, and explain a failure by the wrong one). In between: the names that just caused
        # backtracking, then exact pins, then the rest by name for determinism.
        rank = 0 if is_platform(identifier) else 2 if is_slot(identifier) else 1
        caused = any(cause.requirement.name == identifier for cause in backtrack_causes)
        pinned = any(_is_pin(info.requirement) for info in information[identifier])
        return (rank, not caused, not pinned, identifier)

    def find_matches(self, identifier, requirements, incompatibilities):
        reqs = tuple(requirements[identifier])
        bad = {c.key for c in incompatibilities[identifier]}
        matches = [c for c in self._admitted(identifier, reqs) if c.key not in bad]
        installed = self.prefer.get(identifier)
        if installed is None:
            return matches  # newest first
        # what is installed, then the smallest step up, then the smallest step down: a plan moves
        # things as little as it can
        same = [c for c in matches if c == installed]
        up = sorted((c for c in matches if c.version > installed.version), key=lambda c: c.version)
        down = [c for c in matches if c.version <= installed.version and c != installed]
        return same + up + down

    def _admitted(self, identifier: str, reqs: tuple[Req, ...]) -> list[Candidate]:
        key = (identifier, *reqs)
        found = self._filtered.get(key)
        if found is None:
            shorter = self._filtered.get(key[:-1]) if reqs else None
            if shorter is not None:
                found = [c for c in shorter if reqs[-1].admits(c)]
            else:
                found = [c for c in self._pool(identifier) if all(r.admits(c) for r in reqs)]
            self._filtered[key] = found
        return found

    def _pool(self, identifier: str) -> list[Candidate]:
        if is_platform(identifier):
            fact = self.platform.get(identifier)
            return [fact] if fact is not None else []
        return self.matrix.candidates(identifier)

    def is_satisfied_by(self, requirement: Req, candidate: Candidate) -> bool:
        return requirement.admits(candidate)

    def get_dependencies(self, candidate: Candidate) -> Iterable[Req]:
        if is_platform(candidate.name):
            return []
        return self.matrix.dependencies(candidate, self.env, self.options.policy, self.options.kinds)


def _is_pin(req: Req) -> bool:
    return len(req.specifiers) == 1 and any(s.operator in ("==", "===") for s in req.specifiers[0])


def resolve(
    matrix: Matrix,
    platform: Platform,
    roots: list[Req],
    prefer: Mapping[str, Candidate] | None = None,
    options: Options = Options(),  # noqa: B008 - frozen, shared safely
    rounds: int = MAX_ROUNDS,
) -> Solution:
    """One candidate per required name such that every requirement holds, or Unsatisfiable."""
    env = platform.marker_env()
    roots = [r for r in roots if r.applies(env)]
    trail = _Trail()
    provider = MatrixProvider(matrix, platform, prefer or {}, options)
    gave_up = Undecided(f"the resolver gave up after {rounds} rounds; pin a few versions to narrow the search")
    try:
        state = Resolution(provider, trail).resolve(roots, max_rounds=rounds)
    except ResolutionImpossible as exc:
        final = [(info.requirement, info.parent) for info in exc.causes]
        impossible = Unsatisfiable(trail.main_conflict(final), dict(trail.added))
        return _second_opinion(provider, roots, rounds, impossible, impossible)
    except ResolutionTooDeep:
        return _second_opinion(
            provider, roots, rounds, Unsatisfiable(trail.main_conflict([]), dict(trail.added)), gave_up
        )
    mapping = _needed(provider, state.mapping, roots)
    if mapping is None:  # resolvelib's backtracking lost a requirement of its own result
        return _second_opinion(
            provider, roots, rounds, Unsatisfiable(trail.main_conflict([]), dict(trail.added)), gave_up
        )
    requirers = {name: [(i.requirement, i.parent) for i in state.criteria[name].information] for name in mapping}
    return Solution(mapping, requirers)


def _second_opinion(
    provider: MatrixProvider, roots: list[Req], rounds: int, if_none: Exception, if_out_of_budget: Exception
) -> Solution:
    """Where resolvelib failed, the complete search decides: its solution, ``if_none`` when it proves
    there is none, ``if_out_of_budget`` when it cannot tell within ``rounds`` candidates (after
    ResolutionImpossible that is resolvelib's own verdict, right in all but rare backjumping cases)."""
    try:
        found = complete_search(provider, roots, rounds)
    except OutOfBudget:
        raise if_out_of_budget from None
    if found is None:
        raise if_none from None
    return Solution(*found)


def _needed(provider: MatrixProvider, pins: Mapping[str, Candidate], roots: list[Req]) -> dict[str, Candidate] | None:
    """The pins the roots need, found by following each chosen candidate's own dependencies, each
    checked against the pins; None if one is missing or unmet.

    Not resolvelib's criteria: its backtracking can leave them without a pinned candidate's
    requirement (found by ``tests/test_properties.py``: a result that lacked a package its pick
    needs). An iterative walk with a visited set, so cycles (a module and its provider require
    each other) end.
    """
    needed: dict[str, Candidate] = {}
    frontier = list(roots)
    while frontier:
        requirement = frontier.pop()
        candidate = pins.get(requirement.name)
        if candidate is None or not requirement.admits(candidate):
            return None
        if requirement.name not in needed:
            needed[requirement.name] = candidate
            frontier.extend(provider.get_dependencies(candidate))
    return needed


@dataclass(frozen=True)
class Context:
    """Everything a resolution depends on besides its root requirements."""

    matrix: Matrix
    platform: Platform
    options: Options = Options()  # noqa: RUF009 - frozen
    prefer: Mapping[str, Candidate] = field(default_factory=dict)

    def resolve(self, roots: list[Req]) -> Solution:
        return resolve(self.matrix, self.platform, roots, self.prefer, self.options)

    def fits(self, roots: list[Req]) -> Solution | None:
        """The solution, or None where there is none or none was found within TRIAL_ROUNDS (for trying fixes)."""
        try:
            return resolve(self.matrix, self.platform, roots, self.prefer, self.options, TRIAL_ROUNDS)
        except (Unsatisfiable, Undecided):
            return None

    def dependencies(self, candidate: Candidate) -> list[Req]:
        if is_platform(candidate.name):
            return []
        return self.matrix.dependencies(candidate, self.platform.marker_env(), self.options.policy, self.options.kinds)
