"""The ``asset.yaml`` manifest every suite uses for the weights and datasets it ships or reads.

Each asset has a name, kind, version, source, licence, the sha256 of each file and its lineage.
The schema is ``data/asset.schema.json`` (JSON Schema 2020-12, documented in the README).
Suites call :func:`load_manifest` and :func:`require_verified` before they load a file; the
auditor turns each asset (and each ancestor described inline) into an inventory item.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import yaml

from ..errors import ManifestError
from ..kb import RELATIONS
from ..model import CONFIDENCE, Evidence, FileRef, Item, Kind, Link, Problem
from ..normalize import Normalizer
from ..resources import data_path
from ..yamlio import safe_load
from .weights import WEIGHT_SUFFIXES, sha256_of, weight_evidence

RELATION_KIND = {"base_model": Kind.MODEL, "datasets": Kind.DATASET, "generated_by": Kind.MODEL}
"""The kind of an inline ancestor that does not say its kind, by the link that names it."""


@cache
def _validator():
    """The manifest schema's validator; jsonschema is imported here, when a manifest is read, because
    its import takes seconds (its format checkers build a grammar) and every `paddlectl license`
    command, `--help` included, would pay for it."""
    import jsonschema

    schema = json.loads(data_path("asset.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@dataclass(frozen=True)
class FileCheck:
    """One file of a manifest against its recorded sha256 (``actual`` is None when the file is missing)."""

    asset: str
    path: Path
    expected: str
    actual: str | None

    @property
    def ok(self) -> bool:
        return self.actual == self.expected

    def describe(self) -> str:
        if self.actual is None:
            return f"{self.asset}: {self.path} is missing"
        if self.ok:
            return f"{self.asset}: {self.path} matches"
        return f"{self.asset}: {self.path} has sha256 {self.actual}, the manifest records {self.expected}"


@dataclass(frozen=True)
class Manifest:
    path: Path
    data: dict[str, Any]
    root: Path

    @property
    def assets(self) -> list[dict[str, Any]]:
        return self.data["assets"]

    def asset(self, name: str) -> dict[str, Any]:
        for asset in self.assets:
            if asset["name"] == name:
                return asset
        raise ManifestError(f"{self.path} has no asset {name!r}; it has {[a['name'] for a in self.assets]}")

    def file_path(self, relative: str) -> Path:
        """Where a file listed in the manifest lives on disk."""
        return self.root / relative


def _resolve_root(path: Path, root: Any) -> Path:
    if root is None:
        return path.parent
    if isinstance(root, str):
        return (path.parent / root).resolve()
    try:
        dist = distribution(root["distribution"])
    except PackageNotFoundError:
        raise ManifestError(
            f"{path}: its files live in the distribution {root['distribution']!r}, which is not installed; "
            f"pip install {root['distribution']}"
        ) from None
    return Path(str(dist.locate_file(root.get("path", ""))))


def _schema_errors(data: Any) -> list[str]:
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors]


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate an asset.yaml; raises ManifestError naming every problem and the fix."""
    path = Path(path)
    try:
        data = safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"asset manifest {path} does not exist; give the path of an asset.yaml") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read asset manifest {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path} is not valid YAML: {exc}") from None
    errors = _schema_errors(data)
    if errors:
        raise ManifestError(f"{path} does not follow the asset.yaml schema (see the README): " + "; ".join(errors))
    names = [asset["name"] for asset in data["assets"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ManifestError(f"{path}: asset names must be unique, {duplicates} appear more than once")
    return Manifest(path=path, data=data, root=_resolve_root(path, data.get("root")))


def builtin_manifest(name: str) -> Manifest:
    """A manifest shipped with this package (``rapidocr-pp-ocrv4``: the PP-OCRv4 ONNX models)."""
    shipped = sorted(p.name.removesuffix(".asset.yaml") for p in data_path("assets").glob("*.asset.yaml"))
    if name not in shipped:
        raise ManifestError(f"no shipped asset manifest {name!r}; shipped: {shipped}")
    return load_manifest(data_path("assets", f"{name}.asset.yaml"))


def verify_files(manifest: Manifest) -> list[FileCheck]:
    """Hash every file the manifest lists."""
    checks = []
    for asset in manifest.assets:
        for entry in asset.get("files", []):
            path = manifest.file_path(entry["path"])
            try:
                actual = sha256_of(path) if path.is_file() else None
            except OSError as exc:  # a name too long, a folder we may not read: not merely missing
                raise ManifestError(
                    f"{manifest.path}: cannot read {asset['name']}'s file {path}: {exc.strerror}"
                ) from None
            checks.append(FileCheck(asset["name"], path, entry["sha256"], actual))
    return checks


def require_verified(manifest: Manifest) -> None:
    """Raise ManifestError unless every file is present with its recorded sha256 (call before loading weights)."""
    bad = [check.describe() for check in verify_files(manifest) if not check.ok]
    if bad:
        raise ManifestError(
            f"{manifest.path}: files do not match the manifest: {'; '.join(bad)}. "
            "Reinstall the files from their source, or update the manifest after checking the new licence."
        )


def _ancestor_item(ref: dict[str, Any], relation: str, manifest: Manifest, normalizer: Normalizer) -> Item:
    return Item(
        name=ref["name"],
        kind=Kind(ref["kind"]) if "kind" in ref else RELATION_KIND[relation],
        version=ref.get("version"),
        evidence=[_manifest_evidence(manifest, ref, normalizer)],
        source=ref["source"],
        supplier=ref.get("supplier"),
        license_link=ref.get("license_link"),
    )


def _manifest_evidence(manifest: Manifest, entry: dict[str, Any], normalizer: Normalizer) -> Evidence:
    location = f"{manifest.path}#{entry['name']}"
    return Evidence(
        "asset.yaml", location, entry["license"], normalizer.normalize(entry["license"]), CONFIDENCE["asset.yaml"]
    )


def manifest_items(manifest: Manifest, normalizer: Normalizer) -> list[Item]:
    """Inventory items for every asset (files hashed and checked) and every inline ancestor."""
    checks: dict[tuple[str, Path], FileCheck] = {(c.asset, c.path): c for c in verify_files(manifest)}
    items = []
    for asset in manifest.assets:
        item = Item(
            name=asset["name"],
            kind=Kind(asset["kind"]),
            version=asset["version"],
            evidence=[_manifest_evidence(manifest, asset, normalizer)],
            source=asset["source"],
            supplier=asset.get("supplier"),
            license_link=asset.get("license_link"),
        )
        for entry in asset.get("files", []):
            check = checks[(asset["name"], manifest.file_path(entry["path"]))]
            item.files.append(FileRef(entry["path"], entry["sha256"]))
            if not check.ok:
                item.problems.append(Problem("integrity", check.describe()))
            elif check.path.suffix in WEIGHT_SUFFIXES:
                found, _ = weight_evidence(check.path, normalizer)
                if found is not None:
                    item.evidence.append(found)
        for relation in RELATIONS:
            for ref in asset.get("lineage", {}).get(relation, []):
                if isinstance(ref, dict):
                    items.append(_ancestor_item(ref, relation, manifest, normalizer))
                    item.links.append(Link(relation, ref["name"]))
                else:
                    item.links.append(Link(relation, ref))
        items.append(item)
    return items
