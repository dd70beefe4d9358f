"""Our own monorepo as a matrix dataset, generated from the packages' pyproject.toml files.

The pyproject files are the single source of truth. ``generate`` reads them; ``selfcheck``
compares the bundled data/monorepo.yaml with them; ``--write`` regenerates the file. Versions
that are no longer in any pyproject (released earlier) stay in the data, so it grows a history.
"""

from __future__ import annotations

import datetime as _dt
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import InvalidRequirement, Requirement

from .errors import MatrixError
from .fileio import write_text_atomic
from .matrix import DATA_DIR
from .model import canonical

DATA_FILE = DATA_DIR / "monorepo.yaml"
HEADER = (
    "# Generated from the pyproject.toml files of the paddlectl monorepo by\n"
    "# `paddlectl compat selfcheck --write`. Edit the pyproject files, not this file.\n"
)


def find_root(start: Path | None = None) -> Path:
    """The monorepo root above ``start`` (the directory holding packages/*/pyproject.toml)."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if any(folder.glob("packages/*/pyproject.toml")) and any(folder.glob("tools/*/pyproject.toml")):
            return folder
    raise MatrixError(
        here,
        None,
        "not inside the paddlectl monorepo (no packages/*/pyproject.toml above)",
        "run from the repository or pass --root",
    )


def pyprojects(root: Path) -> list[Path]:
    return sorted([*root.glob("packages/*/pyproject.toml"), *root.glob("tools/*/pyproject.toml")])


def _project(path: Path) -> dict:
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project")
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(path, getattr(exc, "lineno", None), f"invalid TOML: {exc}", "fix the syntax") from None
    if not isinstance(project, dict) or "name" not in project or "version" not in project:
        raise MatrixError(path, None, "no [project] table with name and version", "add them")
    return project


def generate(root: Path, today: str | None = None) -> dict:
    """The monorepo dataset as plain data: one release per package (its current version)."""
    today = today or _dt.date.today().isoformat()
    projects = {path: _project(path) for path in pyprojects(root)}
    local = {canonical(p["name"]) for p in projects.values()}
    sources, packages, external = {}, {}, set()
    for path, project in projects.items():
        rel = path.relative_to(root).as_posix()
        key = rel.removesuffix("/pyproject.toml")
        sources[key] = {"title": f"{rel} of {project['name']}", "url": rel, "date": today}
        requires = []
        if project.get("requires-python"):
            requires.append(f"__python{project['requires-python'].replace(' ', '')}")
        for req in _parsed(path, project.get("dependencies", [])):
            if canonical(req.name) in local:
                requires.append(str(req))
            else:
                external.add(canonical(req.name))
        release = {"versions": [str(project["version"])], "source": key, "kind": "declared", "requires": requires}
        extras = {}
        for extra, texts in project.get("optional-dependencies", {}).items():
            # an extra exists to pull its requirements in, so all are kept (third-party ones too): check
            # names the one missing when `name[extra]` is asked for
            reqs = _parsed(path, texts)
            extras[extra] = [str(req) for req in reqs]
            external.update(canonical(req.name) for req in reqs if canonical(req.name) not in local)
        if extras:
            release["extras"] = extras
        packages[canonical(project["name"])] = {
            "description": str(project.get("description", "")),
            "releases": [release],
        }
    return {
        "schema": 1,
        "dataset": "monorepo",
        "sources": dict(sorted(sources.items())),
        "external": sorted(external),
        "packages": dict(sorted(packages.items())),
    }


def _parsed(path: Path, texts: list[str]) -> list[Requirement]:
    try:
        return [Requirement(text) for text in texts]
    except InvalidRequirement as exc:
        raise MatrixError(path, None, f"invalid dependency: {exc}", "fix it in the pyproject") from None


def merge_history(fresh: dict, old: dict | None) -> dict:
    """Keep releases of versions the pyproject files no longer have (they were released before)."""
    if not old:
        return fresh
    for name, body in (old.get("packages") or {}).items():
        current = fresh["packages"].get(name)
        versions = {v for r in (current or {}).get("releases", []) for v in r["versions"]}
        kept = [r for r in body.get("releases", []) if not set(r["versions"]) & versions]
        if current is None and kept:
            fresh["packages"][name] = {"description": body.get("description", ""), "releases": kept}
        elif kept:
            current["releases"] += kept
        for release in kept:
            if release.get("source") in old.get("sources", {}):
                fresh["sources"].setdefault(release["source"], old["sources"][release["source"]])
    return fresh


def _comparable(data: dict) -> dict:
    """The data without source dates (regenerating on another day is not a disagreement)."""
    return {
        "packages": data.get("packages", {}),
        "external": sorted(data.get("external", [])),
        "sources": {k: {f: v for f, v in s.items() if f != "date"} for k, s in data.get("sources", {}).items()},
    }


def selfcheck(root: Path, data_file: Path = DATA_FILE) -> list[str]:
    """Differences between ``data_file`` and what the pyproject files declare (empty when they agree)."""
    old = yaml.safe_load(data_file.read_text(encoding="utf-8")) if data_file.exists() else None
    if old is None:
        return [f"{data_file} does not exist; run `paddlectl compat selfcheck --write`"]
    fresh = _comparable(merge_history(generate(root), old))
    have = _comparable(old)
    problems = []
    for name in sorted(set(fresh["packages"]) | set(have["packages"])):
        want, got = fresh["packages"].get(name), have["packages"].get(name)
        if got is None:
            problems.append(f"{name}: in the pyproject files but not in {data_file.name}")
        elif want is None:
            problems.append(f"{name}: in {data_file.name} but no pyproject declares it")
        elif want != got:
            problems.append(f"{name}: {data_file.name} says {_summary(got)}, the pyproject says {_summary(want)}")
    if fresh["external"] != have["external"]:
        problems.append(f"third-party names differ: data {have['external']} vs pyproject {fresh['external']}")
    return problems


def _summary(body: dict) -> str:
    return "; ".join(
        f"{','.join(r['versions'])} requires {', '.join(r.get('requires', [])) or 'nothing'}"
        + "".join(f", [{extra}] adds {', '.join(reqs) or 'nothing'}" for extra, reqs in r.get("extras", {}).items())
        for r in body["releases"]
    )


def write(root: Path, data_file: Path = DATA_FILE) -> Path:
    """Regenerate ``data_file`` from the pyproject files, atomically, keeping released history."""
    old = yaml.safe_load(data_file.read_text(encoding="utf-8")) if data_file.exists() else None
    data = merge_history(generate(root), old)
    if old is not None and _comparable(old) == _comparable(data):
        return data_file  # unchanged: keep the old dates
    return write_text_atomic(data_file, HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
