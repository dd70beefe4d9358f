"""The audited project's own declared licence, from its ``pyproject.toml``.

PEP 639 ``license = "SPDX expression"`` is the strongest evidence; the older table forms
(``{text = ...}``, ``{file = ...}``) and licence classifiers are read as for any distribution.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ..errors import InputError
from ..model import CONFIDENCE, Evidence, Item, Kind
from ..normalize import Normalized, Normalizer


def _declared(project: dict, base: Path, location: str, normalizer: Normalizer) -> list[Evidence]:
    license_ = project.get("license")
    if isinstance(license_, str):
        return [
            Evidence(
                "pyproject license", location, license_, normalizer.normalize(license_), CONFIDENCE["pyproject license"]
            )
        ]
    if isinstance(license_, dict) and isinstance(license_.get("text"), str):
        text = license_["text"]
        multi_line = "\n" in text.strip() or len(text) > 200
        reading = normalizer.licence_text(text) if multi_line else normalizer.normalize(text)
        return [Evidence("pyproject license", location, text[:200], reading, CONFIDENCE["License field name"])]
    if isinstance(license_, dict) and isinstance(license_.get("file"), str):
        path = base / license_["file"]
        try:
            reading = normalizer.licence_text(path.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            reading = Normalized(None, "none", f"the licence file {path} cannot be read: {exc}")
        return [Evidence("license file", str(path), license_["file"], reading, CONFIDENCE["license file"])]
    missing = Normalized(None, "none", "pyproject.toml declares no [project] license")
    return [Evidence("pyproject license", location, "", missing, CONFIDENCE["pyproject license"])]


def read_project(pyproject: str | Path) -> dict:
    """The ``[project]`` table of a pyproject.toml; InputError when there is none to read."""
    path = Path(pyproject)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path} does not exist; give the project's pyproject.toml with --project") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}; fix the TOML or point --project elsewhere") from None
    except RecursionError:
        raise InputError(
            f"cannot read {path}: it nests too deeply; fix the TOML or point --project elsewhere"
        ) from None
    project = data.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("name"), str):
        raise InputError(f"{path} has no [project] table with a name; the project's licence is read from there")
    return project


def project_item(pyproject: str | Path, normalizer: Normalizer) -> Item:
    """The project as an inventory item, from the ``[project]`` table of its pyproject.toml."""
    path = Path(pyproject)
    project = read_project(path)
    evidence = _declared(project, path.parent, f"{path}#project.license", normalizer)
    listed = project.get("classifiers", [])
    if not isinstance(listed, list):
        raise InputError(f"{path}: [project] classifiers must be a list of strings, found {type(listed).__name__}")
    classifiers = [c for c in listed if isinstance(c, str) and c.startswith("License ::")]
    evidence += [Evidence("classifier", c, c, normalizer.classifier(c), CONFIDENCE["classifier"]) for c in classifiers]
    version = project.get("version")
    return Item(
        name=project["name"],
        kind=Kind.PROJECT,
        version=version if isinstance(version, str) else None,
        evidence=evidence,
        source=str(path),
    )
