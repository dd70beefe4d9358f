"""Assemble one inventory from every source the user named, each item once."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..model import Item, Kind
from ..normalize import Normalizer
from .artifacts import artifact_items
from .cards import scan_cards
from .dependencies import MISSING, dependency_items
from .distributions import scan_distributions
from .manifest import load_manifest, manifest_items
from .project import project_item, read_project


@dataclass(frozen=True)
class Sources:
    """What to inventory: the Python environment, card folders, asset manifests, models, the project."""

    environment: bool = True
    cards: tuple[Path, ...] = ()
    manifests: tuple[Path, ...] = ()
    weights: tuple[Path, ...] = ()
    project: Path | None = None


def merge(items: Iterable[Item]) -> list[Item]:
    """One item per id: the same ancestor named by several manifests keeps all its evidence and links."""
    merged: dict[str, Item] = {}
    for item in items:
        first = merged.setdefault(item.id, item)
        if first is item:
            continue
        first.evidence += [e for e in item.evidence if e not in first.evidence]
        first.links += [link for link in item.links if link not in first.links]
        first.files += [f for f in item.files if f not in first.files]
        first.problems += item.problems
        first.notices += item.notices
    return list(merged.values())


def build_inventory(sources: Sources, normalizer: Normalizer) -> list[Item]:
    """Every item the sources describe (errors in a named file raise; unreadable cards are recorded)."""
    items: list[Item] = []
    if sources.project is not None:
        items.append(project_item(sources.project, normalizer))
        items += dependency_items(read_project(sources.project), str(sources.project), normalizer)
    if sources.environment:
        items += scan_distributions(normalizer)
    for path in sources.manifests:
        items += manifest_items(load_manifest(path), normalizer)
    for path in sources.cards:
        items += scan_cards(path, normalizer)
    for path in sources.weights:
        items += artifact_items(path, normalizer)
    return merge(items)


def describe(sources: Sources, items: list[Item]) -> list[str]:
    """What the audit covers and what it leaves out, in words: a silent default must not pass for the whole."""
    lines = []
    if sources.project is None:
        lines.append("project: none (no ./pyproject.toml here); --project PATH audits a project and its dependencies")
    else:
        name = next((i.name for i in items if i.kind == Kind.PROJECT), "?")
        missing = sum(1 for i in items if any(e.source == MISSING for e in i.evidence))
        gaps = f"; {missing} not installed, so their licences are unknown" if missing else ""
        lines.append(
            f"project: {sources.project} ({name}) and its declared dependencies, followed through the "
            f"installed distributions{gaps}"
        )
    if sources.environment:
        lines.append(f"environment: every distribution installed for {sys.executable}")
    else:
        lines.append("environment: not audited (--no-env)")
    given = {
        "model and dataset cards (--cards)": sources.cards,
        "asset manifests (--assets)": sources.manifests,
        "models and checkpoints with their lineage (--weights)": sources.weights,
    }
    lines += [f"{what}: {', '.join(map(str, paths))}" for what, paths in given.items() if paths]
    left_out = [what for what, paths in given.items() if not paths]
    if left_out:
        lines.append(f"not audited: {'; '.join(left_out)}")
    kinds = [f"{sum(1 for i in items if i.kind == kind)} {kind.value}" for kind in Kind]
    lines.append(f"{len(items)} items: {', '.join(k for k in kinds if not k.startswith('0 '))}")
    return lines
