"""The monorepo's own rules: layout, metadata, and locks that pin every declared dependency."""

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT_DIRS = sorted(p.parent for p in [*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("tools/*/pyproject.toml")])
EXPECTED = {
    "packages/framework", "packages/ocr", "packages/nlp", "packages/detection", "packages/seg",
    "packages/speech", "packages/rec", "packages/serving", "packages/cli",
    "tools/compat_matrix", "tools/license_audit", "tools/eval_harness",
}  # fmt: skip


def _project(path: Path) -> dict:
    return tomllib.loads((path / "pyproject.toml").read_text())["project"]


def _lock_pins(name: str) -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / name).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_layout_is_the_designed_one():
    assert {str(p.relative_to(ROOT)) for p in PROJECT_DIRS} == EXPECTED


@pytest.mark.parametrize("path", PROJECT_DIRS, ids=lambda p: p.name)
def test_each_package_is_an_independent_distribution(path):
    project = _project(path)
    assert project["name"] == "paddlectl" or project["name"].startswith("paddlectl-")
    assert re.fullmatch(r"\d+\.\d+\.\d+", project["version"])
    assert (path / "CHANGELOG.md").read_text().count(f"## {project['version']}") == 1
    assert any((path / "tests").glob("test_*.py"))
    # PEP 420: the shared `paddlectl` namespace has no __init__.py in any package.
    assert not (path / "src/paddlectl/__init__.py").exists()
    modules = [p for p in (path / "src/paddlectl").iterdir() if p.is_dir() and not p.name.startswith("__")]
    assert len(modules) == 1 and (modules[0] / "__init__.py").exists()


@pytest.mark.parametrize("path", PROJECT_DIRS, ids=lambda p: p.name)
def test_every_declared_dependency_is_pinned_in_the_lock(path):
    project = _project(path)
    declared = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        declared += extra
    pins = _lock_pins("dev.txt")
    local = {canonicalize_name(_project(p)["name"]) for p in PROJECT_DIRS}
    for text in declared:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name in local:
            continue
        assert name in pins, f"{path.name} declares {text!r} but requirements/dev.txt does not pin it; run nox -s lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{path.name} declares {text!r} but the lock pins {name}=={pins[name]}"
        )


def test_asset_wheels_are_pinned_outside_the_compiled_lock():
    """pip-compile cannot leave out a package's requirements, and these wheels' do not resolve with the rest."""
    noxfile = (ROOT / "noxfile.py").read_text()
    table = re.search(r"^ASSET_WHEELS = \{\n(.*?)^\}", noxfile, re.M | re.S).group(1)
    wheels = {name for line in table.splitlines() for name in re.findall(r'"([a-z0-9-]+)"', line.split(":", 1)[1])}
    inputs = (ROOT / "requirements" / "dev.in").read_text().splitlines()
    compiled_inputs = {canonicalize_name(re.split(r"[=<>\[ ]", line)[0]) for line in inputs if line and line[0] != "#"}
    assert wheels and wheels <= set(_lock_pins("assets.txt"))
    assert not wheels & (set(_lock_pins("dev.txt")) | compiled_inputs)


def test_local_dependency_ranges_admit_the_local_versions():
    versions = {canonicalize_name(_project(p)["name"]): _project(p)["version"] for p in PROJECT_DIRS}
    for path in PROJECT_DIRS:
        for text in _project(path).get("dependencies", []):
            requirement = Requirement(text)
            name = canonicalize_name(requirement.name)
            if name in versions:
                assert requirement.specifier.contains(versions[name]), f"{path.name}: {text} excludes {versions[name]}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```(?:bash|sh)\n(.*?)```", readme, flags=re.S)
    assert len(commands) >= 2
    ci = (ROOT / ".ci/run").read_text()
    assert commands[1].strip() in ci
