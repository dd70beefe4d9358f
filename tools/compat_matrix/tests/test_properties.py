"""Properties over small random matrices: every solution satisfies every constraint, and "no
solution" is only returned when a brute-force search over all combinations finds none either.
Giving up (``Undecided``) is allowed only where requirements form a cycle: resolvelib re-pins the
packages of a cycle in turn (p0 2 wants p1 != 3, p1 2 wants p0 < 2, p0 1 wants p1 >= 3, p1 3
wants p0 >= 2, ...) until its round limit, with no memory of the combinations it has left."""

from __future__ import annotations

import itertools

from conftest import ctx_for
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from paddlectl.compat_matrix.matrix import Matrix
from paddlectl.compat_matrix.model import Candidate, Claim, Package, Source, parse_requirement, parse_version
from paddlectl.compat_matrix.resolver import Undecided, Unsatisfiable

NAMES = ["p0", "p1", "p2", "p3"]
SPECS = ["", ">=2", "<2", "==1", "!=3", ">=3", "<3", ">=1,<3"]
SOURCE = Source("gen", "generated", "https://example.invalid", "2025-01-01")


@st.composite
def problems(draw):
    names = NAMES[: draw(st.integers(2, 4))]
    exclusive = draw(st.booleans())  # p0 and p1 provide the same module
    versions = {n: ["1", "2", "3"][: draw(st.integers(1, 3))] for n in names}
    deps = {}
    for name in names:
        others = [o for o in names if o != name]
        for version in versions[name]:
            count = draw(st.integers(0, 2))
            deps[(name, version)] = [draw(st.sampled_from(others)) + draw(st.sampled_from(SPECS)) for _ in range(count)]
    roots = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(SPECS)), min_size=1, max_size=3))
    return names, exclusive, versions, deps, [n + s for n, s in roots]


def build(names, exclusive, versions, deps) -> Matrix:
    matrix = Matrix()
    for name in names:
        package = Package(name, "gen", "gen", provides="m" if exclusive and name in ("p0", "p1") else "")
        for version in reversed(versions[name]):
            claims = tuple(Claim(parse_requirement(text), SOURCE, "declared", "gen") for text in deps[(name, version)])
            package.candidates.append(Candidate(name, parse_version(version), claims=claims))
        matrix.packages[name] = package
    return matrix


def brute_force(matrix: Matrix, exclusive: bool, roots) -> dict | None:
    names = list(matrix.packages)
    options = [[None, *matrix.packages[n].candidates] for n in names]
    for combo in itertools.product(*options):
        chosen = {n: c for n, c in zip(names, combo, strict=True) if c is not None}
        if exclusive and "p0" in chosen and "p1" in chosen:
            continue
        if not all(r.name in chosen and r.admits(chosen[r.name]) for r in roots):
            continue
        if all(
            c.req.name in chosen and c.req.admits(chosen[c.req.name]) for cand in chosen.values() for c in cand.claims
        ):
            return chosen
    return None


def cyclic(deps) -> bool:
    """Whether some package's requirements lead back to it."""
    edges: dict[str, set[str]] = {}
    for (name, _), texts in deps.items():
        edges.setdefault(name, set()).update(parse_requirement(t).name for t in texts)

    def reaches(start, goal, seen):
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges.get(start, ()))

    return any(reaches(name, name, set()) for name in edges)


# Matrices found by this test: backtracking left a result without p0, which p2 3 requires
# (now every requirement of the result is checked); a cycle resolvelib never leaves; resolvelib's
# backjumping dropped p0 2 (whose p3 2 needs p1, which needs p0 < 2) without trying p3 1, and said
# no (now a complete search checks every "no").
@example((["p0", "p1", "p2", "p3"], False, {"p0": ["1", "2"], "p1": ["1"], "p2": ["1"], "p3": ["1", "2"]},
          {("p0", "1"): ["p3>=2", "p3<2"], ("p0", "2"): ["p3"], ("p1", "1"): ["p0<2"], ("p2", "1"): [],
           ("p3", "1"): [], ("p3", "2"): ["p1"]}, ["p0"]))  # fmt: skip
@example((["p0", "p1", "p2"], False, {"p0": ["1", "2"], "p1": ["1", "2", "3"], "p2": ["1", "2", "3"]},
          {("p0", "1"): [], ("p0", "2"): ["p1", "p2<2"], ("p1", "1"): [], ("p1", "2"): [], ("p1", "3"): ["p0<2"],
           ("p2", "1"): [], ("p2", "2"): [], ("p2", "3"): ["p0"]}, ["p2"]))  # fmt: skip
@example((["p0", "p1", "p2"], False, {"p0": ["1", "2"], "p1": ["1", "2", "3"], "p2": ["1"]},
          {("p0", "1"): ["p1", "p1>=3"], ("p0", "2"): ["p1", "p1!=3"], ("p1", "1"): [], ("p1", "2"): ["p0", "p0<2"],
           ("p1", "3"): ["p0>=2"], ("p2", "1"): []}, ["p0"]))  # fmt: skip
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_solutions_are_valid_and_no_solution_means_none_exists(problem):
    names, exclusive, versions, deps, root_texts = problem
    matrix = build(names, exclusive, versions, deps)
    roots = [parse_requirement(t, "requested") for t in root_texts]
    ctx = ctx_for(matrix)
    try:
        solution = ctx.resolve(roots)
    except Undecided:
        assert cyclic(deps), "the resolver gave up on requirements without a cycle"
        return
    except Unsatisfiable:
        assert brute_force(matrix, exclusive, roots) is None, "the resolver said no, brute force found a solution"
        return
    chosen = solution.packages()
    for root in roots:
        assert root.name in chosen and root.admits(chosen[root.name])
    for cand in chosen.values():
        for req in ctx.dependencies(cand):  # package requirements and the module each provider holds
            assert req.admits(solution.mapping[req.name]), f"{cand} requires {req}"
    assert not (exclusive and "p0" in chosen and "p1" in chosen)
