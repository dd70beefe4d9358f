"""A complete depth-first search over the same provider, the second opinion when resolvelib says no.

resolvelib's backjumping is not complete: after a conflict it can discard a choice that every
solution needs and report "impossible" although one exists (found by ``tests/test_properties.py``:
p0 2 needs p3, p3 2 needs p1, p1 needs p0 < 2; it gives up on p0 2 instead of trying p3 1), and on
cycles it can re-pin the same packages until its round limit. This search undoes one choice at a
time, so its "no" is a proof. It is exponential in the worst case, hence the node budget; choosing
the name with the fewest admitted candidates first keeps the real matrices' searches short.
"""

from __future__ import annotations

from collections.abc import Mapping

from .model import Candidate, Req

Requirers = dict[str, list[tuple[Req, Candidate | None]]]


class OutOfBudget(Exception):
    """The search tried more candidates than it was allowed to."""


def complete_search(provider, roots: list[Req], budget: int) -> tuple[dict[str, Candidate], Requirers] | None:
    """A choice satisfying every requirement reached from ``roots``, with who required each name, or
    None when none exists. Candidates come in the provider's order (newest, or nearest the installed)."""
    tried = 0

    def admitted(name: str, reqs: list[tuple[Req, Candidate | None]]) -> list[Candidate]:
        return provider.find_matches(name, {name: [r for r, _ in reqs]}, {name: []})

    def extend(pins: Mapping[str, Candidate], requirers: Requirers):
        nonlocal tried
        open_names = [name for name in requirers if name not in pins]
        if not open_names:
            return dict(pins), requirers
        choices = {name: admitted(name, requirers[name]) for name in open_names}
        name = min(open_names, key=lambda n: (len(choices[n]), n))
        for candidate in choices[name]:
            tried += 1
            if tried > budget:
                raise OutOfBudget
            chosen = {**pins, name: candidate}
            deps = list(provider.get_dependencies(candidate))
            if any(d.name in chosen and not d.admits(chosen[d.name]) for d in deps):
                continue
            grown = {n: list(v) for n, v in requirers.items()}
            for dep in deps:
                grown.setdefault(dep.name, []).append((dep, candidate))
            found = extend(chosen, grown)
            if found is not None:
                return found
        return None

    start: Requirers = {}
    for root in roots:
        start.setdefault(root.name, []).append((root, None))
    return extend({}, start)
