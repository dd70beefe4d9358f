"""Target profiles (another machine, described in YAML) and what is installed here or there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path

from .errors import MatrixError, unknown_name
from .matrix import Matrix
from .model import Candidate, Req, canonical, parse_requirement, parse_version
from .platform import Platform, make_platform
from .yamlsrc import LDict, LList, load_yaml

PROFILE_DIR = Path(__file__).parent / "profiles"
_PROFILE_KEYS = {"name", "description", "platform", "installed", "requires"}


@dataclass(frozen=True)
class Profile:
    """A machine to plan for: its platform facts, what it has installed, what its lock should hold."""

    name: str
    path: Path
    description: str
    platform: Platform
    installed: tuple[Req, ...]
    requires: tuple[Req, ...]


def bundled_profiles() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PROFILE_DIR.glob("*.yml"))}


def load_profile(name_or_path: str | Path) -> Profile:
    """A profile from a YAML path, or by the name of a bundled one (``linux-py311-cu126``)."""
    path = Path(name_or_path)
    if not path.exists():
        bundled = bundled_profiles()
        if str(name_or_path) not in bundled:
            if path.suffix in (".yml", ".yaml") or "/" in str(name_or_path):
                raise MatrixError(
                    path, None, "profile file not found", f"check the path, or use a bundled one: {', '.join(bundled)}"
                )
            raise unknown_name("profile", str(name_or_path), list(bundled))
        path = bundled[str(name_or_path)]
    data = load_yaml(path)
    for key in data:
        if key not in _PROFILE_KEYS:
            raise MatrixError(
                path,
                data.key_lines[key],
                f"unknown key {key!r} in a profile",
                f"allowed: {', '.join(sorted(_PROFILE_KEYS))}",
            )
    facts = data.get("platform")
    if not isinstance(facts, LDict):
        raise MatrixError(
            path,
            data.line,
            "a profile needs a platform: mapping",
            "add platform: {python: '3.11', os: linux, arch: x86_64}",
        )
    name = str(data.get("name", path.stem))
    platform = make_platform(facts, f"target {name}", str(path), facts.key_lines)
    return Profile(
        name=name,
        path=path,
        description=str(data.get("description", "")),
        platform=platform,
        installed=_requirements(data, "installed", path, "installed"),
        requires=_requirements(data, "requires", path, "profile"),
    )


def _requirements(data: LDict, key: str, path: Path, origin: str) -> tuple[Req, ...]:
    items = data.get(key, LList())
    if not isinstance(items, LList):
        raise MatrixError(path, data.key_lines.get(key), f"{key} must be a list of requirements")
    reqs = []
    for index, text in enumerate(items):
        try:
            reqs.append(parse_requirement(text, origin))
        except ValueError as exc:
            raise MatrixError(path, items.item_lines[index], str(exc)) from None
        if origin == "installed" and _exact_version(reqs[-1]) is None:
            raise MatrixError(
                path,
                items.item_lines[index],
                f"installed entry {text!r} is not an exact pin",
                "write it like 'paddleocr==3.0.0'",
            )
    return tuple(reqs)


def _exact_version(req: Req) -> str | None:
    specs = list(req.specifiers[0])
    if len(req.specifiers) == 1 and len(specs) == 1 and specs[0].operator in ("==", "==="):
        return specs[0].version
    return None


def installed_from_pins(matrix: Matrix, pins: tuple[Req, ...] | list[Req]) -> dict[str, Candidate]:
    """Exact pins (``paddlepaddle-gpu[cu126]==3.0.0``) -> the matrix's candidates.

    A pin the matrix does not list becomes a candidate with unknown needs, so what others
    require of it is still checked.
    """
    found: dict[str, Candidate] = {}
    for req in pins:
        if req.name not in matrix.packages:
            raise unknown_name("package", req.name, list(matrix.packages))
        version = _exact_version(req)
        if version is None:
            raise MatrixError(
                req.text, None, "an installed entry must be an exact pin", "write it like 'paddleocr==3.0.0'"
            )
        matches = [c for c in matrix.candidates(req.name) if req.admits(c)]
        if matches:
            found[req.name] = matches[0]
            continue
        build = next(iter(req.tags), "")
        try:
            cand = Candidate(
                req.name,
                parse_version(version),
                build,
                frozenset({build}) if build else frozenset(),
                label=version,
                where="unlisted",
            )
        except ValueError as exc:
            raise MatrixError(req.text, None, str(exc)) from None
        matrix.add_unlisted(cand)
        found[req.name] = cand
    return found


def installed_here(matrix: Matrix) -> dict[str, Candidate]:
    """The distributions installed in this Python environment that the matrix knows about."""
    pins = []
    for dist in distributions():
        name = canonical(dist.metadata["Name"] or "")
        if name not in matrix.packages:
            continue
        build = _paddle_build(dist) if matrix.packages[name].provides == "paddle" else ""
        tags = f"[{build}]" if build else ""
        pins.append(parse_requirement(f"{name}{tags}=={dist.version}", "installed"))
    return installed_from_pins(matrix, pins)


def versions_here() -> dict[str, str]:
    """Every distribution installed in this Python environment, by PEP 503 name, the first on sys.path
    winning (the one Python imports): what an extra's third-party requirements are checked against."""
    found: dict[str, str] = {}
    for dist in distributions():
        found.setdefault(canonical(dist.metadata["Name"] or ""), dist.version)
    return found


def _paddle_build(dist) -> str:
    """The CUDA variant of an installed Paddle build, read from paddle/version/__init__.py (not imported)."""
    for file in dist.files or []:
        if str(file).replace("\\", "/").endswith("paddle/version/__init__.py"):
            text = Path(dist.locate_file(file)).read_text(errors="replace")
            match = re.search(r"^cuda_version\s*=\s*['\"](\d+)\.(\d+)", text, flags=re.M)
            if match:
                return f"cu{match.group(1)}{match.group(2)}"
    return ""
