"""The matrix as data: YAML files, every claim with a source and a kind, validated line by line."""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from packaging.specifiers import SpecifierSet

from .errors import MatrixError, unknown_name
from .model import (
    KINDS,
    ZERO,
    Breakage,
    Candidate,
    Claim,
    Package,
    Req,
    Source,
    canonical,
    is_platform,
    is_slot,
    parse_requirement,
    parse_version,
)
from .platform import FACTS
from .yamlsrc import LDict, LList, load_yaml

DATA_DIR = Path(__file__).parent / "data"
_ANY = SpecifierSet()
POLICIES = ("strict", "lenient")
"""strict: every claim must hold; lenient: where claims on one requirement disagree, any one will do."""

_TOP_KEYS = {"schema", "dataset", "provenance", "sources", "external", "packages", "breakages"}
_SOURCE_KEYS = {"title", "url", "date", "note"}
_PACKAGE_KEYS = {"description", "provides", "releases"}
_RELEASE_KEYS = {"versions", "builds", "requires", "extras", "source", "kind", "note"}
_CLAIM_KEYS = {"req", "source", "kind", "builds", "note"}
_BUILD_KEYS = {"cudnn", "tensorrt", "index", "find_links", "pin", "note"}
_BREAKAGE_KEYS = {"id", "between", "reason", "source", "kind"}


class Matrix:
    """Every package, claim, breakage and source of the loaded files, ready for the resolver."""

    def __init__(self) -> None:
        self.packages: dict[str, Package] = {}
        self.breakages: list[Breakage] = []
        self.sources: dict[str, Source] = {}
        self.external: set[str] = set()
        self.files: list[Path] = []
        self._extra: dict[str, list[Candidate]] = defaultdict(list)

    # -- lookup -----------------------------------------------------------------------------
    def package(self, name: str) -> Package:
        """The package called ``name`` (any spelling PEP 503 accepts), or an error naming the closest."""
        found = self.packages.get(canonical(name))
        if found is None:
            raise unknown_name("package", name, list(self.packages))
        return found

    def candidates(self, name: str) -> list[Candidate]:
        """Candidates of a package or exclusive group, newest first (platform facts live elsewhere)."""
        if name.startswith("@"):
            return self._slot_candidates(name)
        package = self.packages.get(name)
        return (package.candidates if package else []) + self._extra.get(name, [])

    def add_unlisted(self, candidate: Candidate) -> None:
        """Make an installed version the data does not list resolvable (its own needs are unknown)."""
        if candidate not in self.candidates(candidate.name):
            self._extra[candidate.name].append(candidate)

    @property
    def providers(self) -> dict[str, list[str]]:
        """Exclusive module name -> the packages that provide it."""
        found: dict[str, list[str]] = defaultdict(list)
        for package in self.packages.values():
            if package.provides:
                found[package.provides].append(package.name)
        return found

    def _slot_candidates(self, name: str) -> list[Candidate]:
        """A breakage has two sides; a module has one candidate per provider version, newest first."""
        if name.startswith("@break:"):
            return [Candidate(name, ZERO, tags=frozenset({side})) for side in ("0", "1")]
        providers = self.providers.get(name[1:], [])
        found = {
            (c.version, p): Candidate(name, c.version, p, frozenset({p}), label=c.label)
            for p in providers
            for c in self.packages[p].candidates
        }
        # newest first; at one version, providers in the order the data defines them (CPU before GPU)
        by_provider = sorted(found, key=lambda k: providers.index(k[1]))
        return [found[k] for k in sorted(by_provider, key=lambda k: k[0], reverse=True)]  # stable

    # -- dependencies ---------------------------------------------------------------------------
    def dependencies(
        self, candidate: Candidate, env: dict[str, str], policy: str = "strict", kinds: tuple[str, ...] = KINDS
    ) -> list[Req]:
        """What ``candidate`` needs on a platform whose marker environment is ``env``."""
        return list(_dependencies(self, candidate, tuple(sorted(env.items())), policy, kinds))

    def breakages_for(self, name: str) -> list[tuple[Breakage, int]]:
        return [(b, i) for b in self.breakages for i, side in enumerate(b.sides) if side.name == name]

    def disagreements(self, candidate: Candidate) -> list[list[Claim]]:
        """Groups of claims on the same requirement whose version ranges differ."""
        groups: dict[tuple, list[Claim]] = defaultdict(list)
        for claim in candidate.claims:
            groups[_claim_group(claim)].append(claim)
        return [g for g in groups.values() if len({str(c.req.specifiers[0]) for c in g}) > 1]

    # -- loading ----------------------------------------------------------------------------------
    def validate(self) -> None:
        """Every requirement names a known package or platform fact; every breakage side is known."""
        for package in self.packages.values():
            for candidate in package.candidates:
                for claim in candidate.claims + tuple(c for _, claims in candidate.extras for c in claims):
                    self._check_name(claim.req.name, claim.where)
        for breakage in self.breakages:
            for side in breakage.sides:
                self._check_name(side.name, breakage.where)

    def _check_name(self, name: str, where: str) -> None:
        if name.startswith("@"):
            if name[1:] not in self.providers:
                path, line = _split_where(where)
                raise MatrixError(
                    path,
                    line,
                    f"no package provides module {name[1:]!r}",
                    f"known modules: {', '.join(self.providers)}",
                )
        elif is_platform(name):
            if name[2:] not in FACTS:
                known = ", ".join(f"__{k}" for k in FACTS)
                path, line = _split_where(where)
                raise MatrixError(path, line, f"unknown platform fact {name!r}", f"use one of {known}")
        elif name not in self.packages and name not in self.external:
            path, line = _split_where(where)
            raise MatrixError(
                path,
                line,
                f"requirement on {name!r}, which no matrix file defines",
                "add the package or list it under external:",
            )


@lru_cache(maxsize=65536)
def _dependencies(
    matrix: Matrix, candidate: Candidate, env: tuple, policy: str, kinds: tuple[str, ...]
) -> tuple[Req, ...]:
    environment = dict(env)
    wanted = [c for c in candidate.claims if c.kind in kinds and c.req.applies(environment)]
    wanted = [c for c in wanted if c.req.name not in matrix.external or c.req.name in matrix.packages]
    if policy == "lenient":
        groups: dict[tuple, list[Claim]] = defaultdict(list)
        for claim in wanted:
            groups[_claim_group(claim)].append(claim)
        reqs = [_merge(group) for group in groups.values()]
    else:
        reqs = [_with_claims(claim.req, (claim,)) for claim in wanted]
    for req in tuple(reqs):
        reqs += _extra_needs(matrix, req, environment, kinds, frozenset())
    package = matrix.packages.get(candidate.name)
    if package is not None and package.provides:
        pin = SpecifierSet(f"=={candidate.version}")
        reqs.append(Req(f"@{package.provides}", (pin,), frozenset({package.name}), text=f"module {package.provides}"))
    if candidate.name.startswith("@") and not candidate.name.startswith("@break:"):
        # a module is there only if its provider is: @paddle 3.0.0 [paddlepaddle-gpu] needs paddlepaddle-gpu==3.0.0
        pin = SpecifierSet(f"=={candidate.version}")
        reqs.append(Req(candidate.build, (pin,), text=f"{candidate.build}=={candidate.label or candidate.version}"))
    for breakage, side in matrix.breakages_for(candidate.name):
        if breakage.kind in kinds and breakage.sides[side].admits(candidate):
            reqs.append(Req(f"@break:{breakage.id}", (_ANY,), frozenset({str(side)}), text=f"breakage {breakage.id}"))
    return tuple(reqs)


def _extra_needs(matrix: Matrix, req: Req, env: dict[str, str], kinds: tuple[str, ...], seen: frozenset) -> list[Req]:
    """What ``req``'s extras add (``X[onnx]``: the onnx extra's requirements), as requirements of whoever asks
    for them (origin ``extra``). Only those every candidate of X that ``req`` admits shares, so none is imposed
    that the chosen X lacks; third-party names are left out, as under requires:."""
    package = matrix.packages.get(req.name)
    if package is None or not req.tags:
        return []
    admitted = [c for c in package.candidates if req.admits(c)]
    needs = []
    for extra in sorted(req.tags):
        if (req.name, extra) in seen:
            continue  # an extra that asks for another of its package's extras (all = [a, b]) ends here
        common: dict | None = None
        for cand in admitted:
            mine = {
                (str(c.req), c.source.key): c
                for c in cand.extra_claims(extra)
                if c.kind in kinds and c.req.applies(env) and (c.req.name in matrix.packages or is_platform(c.req.name))
            }
            common = mine if common is None else {k: v for k, v in common.items() if k in mine}
        for claim in (common or {}).values():
            need = Req(
                claim.req.name,
                claim.req.specifiers,
                claim.req.tags,
                claim.req.marker,
                f"{claim.req} (for {req.name}[{extra}])",
                "extra",
                (claim,),
            )
            needs += [need, *_extra_needs(matrix, need, env, kinds, seen | {(req.name, extra)})]
    return needs


def _claim_group(claim: Claim) -> tuple:
    return (claim.req.name, claim.req.tags, str(claim.req.marker))


def _with_claims(req: Req, claims: tuple[Claim, ...]) -> Req:
    return Req(req.name, req.specifiers, req.tags, req.marker, req.text, req.origin, claims)


def _merge(claims: list[Claim]) -> Req:
    first = claims[0].req
    specs = tuple(dict.fromkeys(c.req.specifiers[0] for c in claims))
    text = first.text if len(specs) == 1 else ""
    return Req(first.name, specs, first.tags, first.marker, text, claims=tuple(claims))


def _split_where(where: str) -> tuple[str, int | None]:
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else (where, None)


# -- reading files --------------------------------------------------------------------------------


def _keys(node: LDict, allowed: set[str], path: Path, what: str) -> None:
    for key in node:
        if key not in allowed:
            raise MatrixError(
                path, node.key_lines[key], f"unknown key {key!r} in {what}", f"allowed: {', '.join(sorted(allowed))}"
            )


def _need(node: LDict, key: str, kind: type | None, path: Path, what: str):
    """``node[key]``, which must exist (and be a ``kind`` when given)."""
    if key not in node or node[key] is None:
        raise MatrixError(path, node.line, f"{what} has no {key!r}", f"add `{key}:`")
    value = node[key]
    if kind is not None and not isinstance(value, kind):
        expected = {LDict: "mapping", LList: "list", str: "string"}.get(kind, kind.__name__)
        raise MatrixError(
            path, node.key_lines[key], f"{what}: {key!r} must be a {expected}, got {type(value).__name__}"
        )
    return value


def _line(node: LDict, key: str) -> int:
    return node.key_lines.get(key, node.line)


def load_file(path: Path, matrix: Matrix) -> None:
    """Add one matrix file's sources, packages and breakages to ``matrix``."""
    data = load_yaml(path)
    _keys(data, _TOP_KEYS, path, "a matrix file")
    if data.get("schema") != 1:
        raise MatrixError(
            path, _line(data, "schema"), f"schema must be 1, got {data.get('schema')!r}", "put `schema: 1` at the top"
        )
    dataset = _need(data, "dataset", str, path, "a matrix file")
    sources = _need(data, "sources", LDict, path, "a matrix file")
    for key, entry in sources.items():
        if not isinstance(entry, LDict):
            raise MatrixError(
                path, sources.key_lines[key], f"source {key!r} must be a mapping with title, url and date"
            )
        _keys(entry, _SOURCE_KEYS, path, f"source {key!r}")
        fields = {f: str(_need(entry, f, None, path, f"source {key!r}")) for f in ("title", "url", "date")}
        source = Source(key, note=str(entry.get("note", "")), **fields)
        if matrix.sources.get(key, source) != source:
            raise MatrixError(
                path,
                sources.key_lines[key],
                f"source {key!r} is defined differently in another matrix file",
                "rename one",
            )
        matrix.sources[key] = source
    external = data.get("external", LList())
    if not isinstance(external, list) or not all(isinstance(e, str) for e in external):
        raise MatrixError(path, _line(data, "external"), "external must be a list of package names")
    matrix.external.update(canonical(e) for e in external)
    packages = _need(data, "packages", LDict, path, "a matrix file")
    for name, body in packages.items():
        _load_package(path, dataset, name, body, packages.key_lines[name], matrix)
    for index, body in enumerate(data.get("breakages", LList())):
        _load_breakage(path, body, data["breakages"].item_lines[index], matrix)
    matrix.files.append(path)


def _load_package(path: Path, dataset: str, name: str, body: object, line: int, matrix: Matrix) -> None:
    canon = canonical(name)
    if canon in matrix.packages:
        other = matrix.packages[canon].where
        raise MatrixError(path, line, f"package {name!r} is already defined at {other}", "keep one definition")
    if not isinstance(body, LDict):
        raise MatrixError(path, line, f"package {name!r} must be a mapping with releases:")
    _keys(body, _PACKAGE_KEYS, path, f"package {name!r}")
    package = Package(canon, dataset, f"{path}:{line}", str(body.get("provides", "")), str(body.get("description", "")))
    releases = _need(body, "releases", LList, path, f"package {name!r}")
    for index, release in enumerate(releases):
        package.candidates += _load_release(path, name, release, releases.item_lines[index], matrix)
    seen: set = set()
    for candidate in package.candidates:
        if candidate.key in seen:
            raise MatrixError(
                path, int(candidate.where.rpartition(":")[2]), f"{candidate} is listed twice", "merge the two releases"
            )
        seen.add(candidate.key)
    package.candidates.sort(key=lambda c: (c.version, c.build), reverse=True)
    matrix.packages[canon] = package


def _load_release(path: Path, name: str, release: object, line: int, matrix: Matrix) -> list[Candidate]:
    what = f"a release of {name!r}"
    if not isinstance(release, LDict):
        raise MatrixError(path, line, f"{what} must be a mapping with versions: and requires:")
    _keys(release, _RELEASE_KEYS, path, what)
    versions = _need(release, "versions", LList, path, what)
    if not versions:
        raise MatrixError(path, release.line, f"{what} lists no versions")
    builds = release.get("builds", LDict())
    if not isinstance(builds, LDict):
        raise MatrixError(path, _line(release, "builds"), f"{what}: builds must map build names to their facts")
    for build, facts in builds.items():
        if facts is not None and not isinstance(facts, LDict):
            raise MatrixError(
                path, builds.key_lines[build], f"build {build!r} must map to facts (cudnn, tensorrt, index ...)"
            )
        _keys(facts or LDict(), _BUILD_KEYS, path, f"build {build!r}")
    if "source" in release and not (isinstance(release["source"], str) and release["source"] in matrix.sources):
        raise MatrixError(
            path,
            _line(release, "source"),
            f"release cites unknown source {release['source']!r}",
            "define it under sources:",
        )
    if "kind" in release and release["kind"] not in KINDS:
        raise MatrixError(
            path, _line(release, "kind"), f"kind must be one of {', '.join(KINDS)}, got {release['kind']!r}"
        )
    claims = _load_claims(
        path, release, release.get("requires", LList()), _line(release, "requires"), set(builds), matrix
    )
    extras = _load_extras(path, release, set(builds), matrix)
    result = []
    for index, raw in enumerate(versions):
        vline = versions.item_lines[index]
        try:
            version = parse_version(raw)
        except ValueError as exc:
            raise MatrixError(path, vline, str(exc)) from None
        for build in builds or [""]:
            facts = builds.get(build) or {}
            result.append(
                Candidate(
                    name=canonical(name),
                    version=version,
                    build=build,
                    tags=frozenset({build} if build else ()) | frozenset(extras),
                    claims=_for_build(claims, build),
                    info=tuple((k, str(v)) for k, v in facts.items()),
                    label=str(raw),
                    where=f"{path}:{vline}",
                    extras=tuple((extra, _for_build(found, build)) for extra, found in extras.items()),
                )
            )
    return result


def _for_build(claims: list[tuple[set[str] | None, Claim]], build: str) -> tuple[Claim, ...]:
    return tuple(c for b, c in claims if b is None or build in b)


def _load_extras(
    path: Path, release: LDict, builds: set[str], matrix: Matrix
) -> dict[str, list[tuple[set[str] | None, Claim]]]:
    """``extras: {onnx: ["onnx>=1.15,<2"]}``: what ``name[onnx]`` adds, claims as under requires:."""
    extras = release.get("extras", LDict())
    if not isinstance(extras, LDict):
        raise MatrixError(path, _line(release, "extras"), "extras must map extra names to requirement lists")
    found = {}
    for extra, requires in extras.items():
        if builds & {extra}:
            raise MatrixError(path, extras.key_lines[extra], f"extra {extra!r} has the name of a build", "rename one")
        found[extra] = _load_claims(path, release, requires, extras.key_lines[extra], builds, matrix)
        for _, claim in found[extra]:
            if is_slot(claim.req.name):
                where = _split_where(claim.where)
                raise MatrixError(
                    *where, f"extra {extra!r} requires {claim.req.name}", "list packages or platform facts"
                )
    return found


def _load_claims(
    path: Path, release: LDict, requires: object, line: int, builds: set[str], matrix: Matrix
) -> list[tuple[set[str] | None, Claim]]:
    """Requirements (``requires:`` or one extra's list), each a claim citing the release's source unless it says."""
    if not isinstance(requires, LList):
        raise MatrixError(path, line, "requires and each extra must be a list of requirements")
    claims = []
    for index, item in enumerate(requires):
        line = requires.item_lines[index]
        entry = item if isinstance(item, LDict) else LDict(req=item)
        if isinstance(item, LDict):
            _keys(item, _CLAIM_KEYS, path, "a requirement")
        source_key = entry.get("source", release.get("source"))
        kind = entry.get("kind", release.get("kind"))
        if not (isinstance(source_key, str) and source_key in matrix.sources):
            known = ", ".join(sorted(matrix.sources)) or "none defined"
            raise MatrixError(
                path,
                line,
                f"requirement cites unknown source {source_key!r}",
                f"define it under sources: (known: {known})",
            )
        if kind not in KINDS:
            raise MatrixError(
                path, line, f"kind must be one of {', '.join(KINDS)}, got {kind!r}", "say how the claim is known"
            )
        try:
            req = parse_requirement(entry.get("req"))
        except ValueError as exc:
            raise MatrixError(path, line, str(exc)) from None
        only = entry.get("builds")
        if only is not None:
            if not isinstance(only, list) or not all(isinstance(b, str) for b in only):
                raise MatrixError(path, line, f"builds must be a list of build names, got {only!r}")
            unknown = set(only) - builds
            if unknown:
                raise MatrixError(
                    path,
                    line,
                    f"requirement is limited to undefined builds {sorted(unknown)}",
                    f"defined: {sorted(builds)}",
                )
            only = set(only)
        note = str(entry.get("note", release.get("note", "")))
        claims.append((only, Claim(req, matrix.sources[source_key], kind, f"{path}:{line}", note)))
    return claims


def _load_breakage(path: Path, body: object, line: int, matrix: Matrix) -> None:
    if not isinstance(body, LDict):
        raise MatrixError(path, line, "a breakage must be a mapping with id, between, reason, source, kind")
    _keys(body, _BREAKAGE_KEYS, path, "a breakage")
    between = _need(body, "between", LList, path, "a breakage")
    if len(between) != 2:
        raise MatrixError(
            path, _line(body, "between"), "between must list exactly two requirements", "split it into rules of two"
        )
    try:
        sides = tuple(parse_requirement(text) for text in between)
    except ValueError as exc:
        raise MatrixError(path, _line(body, "between"), str(exc)) from None
    if sides[0].name == sides[1].name:
        raise MatrixError(path, _line(body, "between"), "both sides of a breakage name the same package")
    source_key, kind = body.get("source"), body.get("kind")
    if source_key not in matrix.sources:
        raise MatrixError(
            path, _line(body, "source"), f"breakage cites unknown source {source_key!r}", "define it under sources:"
        )
    if kind not in KINDS:
        raise MatrixError(path, _line(body, "kind"), f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    breakage_id = str(_need(body, "id", str, path, "a breakage"))
    reason = str(_need(body, "reason", str, path, "a breakage"))
    matrix.breakages.append(Breakage(breakage_id, sides, reason, matrix.sources[source_key], kind, f"{path}:{line}"))


def bundled_files() -> list[Path]:
    return sorted(DATA_DIR.glob("*.yaml"))


def load_matrix(paths: list[Path] | None = None) -> Matrix:
    """Load and validate matrix files (the bundled ones when ``paths`` is empty)."""
    matrix = Matrix()
    for path in paths or bundled_files():
        load_file(Path(path), matrix)
    matrix.validate()
    return matrix
