"""Assemble one inventory from every source the user named, each item once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..model import Item
from ..normalize import Normalizer
from .cards import scan_cards
from .distributions import scan_distributions
from .manifest import load_manifest, manifest_items
from .project import project_item
from .weights import weight_item


@dataclass(frozen=True)
class Sources:
    """What to inventory: the Python environment, card folders, asset manifests, weight files, the project."""

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
    if sources.environment:
        items += scan_distributions(normalizer)
    for path in sources.manifests:
        items += manifest_items(load_manifest(path), normalizer)
    for path in sources.cards:
        items += scan_cards(path, normalizer)
    items += [weight_item(path, normalizer) for path in sources.weights]
    return merge(items)
