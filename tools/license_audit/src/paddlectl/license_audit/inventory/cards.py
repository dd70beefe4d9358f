"""Model and dataset cards: the YAML front matter of a README.md, in the Hugging Face convention.

Read fields: ``license`` (a Hub id or SPDX expression; a list means all apply), ``license_name``
and ``license_link`` (used with ``license: other``), ``base_model`` and ``datasets`` (lineage).
A card whose front matter is missing or broken is still inventoried, as UNKNOWN with the problem,
because a scan must report what it could not read rather than stop or skip it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from ..model import CONFIDENCE, Evidence, Item, Kind, Link, Problem
from ..normalize import Normalized, Normalizer
from ..yamlio import safe_load

DATASET_KEYS = {
    "task_categories", "task_ids", "size_categories", "dataset_info", "configs", "pretty_name",
    "annotations_creators", "language_creators", "multilinguality", "source_datasets",
}  # fmt: skip
"""Front-matter keys only dataset cards use."""

CARD_NAME = "README.md"


def front_matter(text: str) -> dict[str, Any]:
    """The YAML block between the leading ``---`` lines; raises ValueError naming what is wrong."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("the card has no YAML front matter (it must start with a '---' line)")
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        raise ValueError("the front matter is not closed by a second '---' line") from None
    try:
        data = safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise ValueError(f"the front matter is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"the front matter must be a mapping, found {type(data).__name__}")
    return data


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [str(v) for v in values if v is not None and str(v).strip()]


def license_evidence(
    data: dict[str, Any], location: str, normalizer: Normalizer, source: str = "card"
) -> list[Evidence]:
    """The licence a card (or a record written in its convention, such as a lineage record) declares."""
    licenses = _as_list(data.get("license"))
    name, link = data.get("license_name"), data.get("license_link")
    if not licenses:
        missing = Normalized(None, "none", f"the {source} declares no licence")
        return [Evidence(f"{source} license", location, "", missing, CONFIDENCE[f"{source} license"])]
    if [value.strip().lower() for value in licenses] == ["other"]:
        if name:
            named = normalizer.normalize(str(name))
            if named.known and named.method in ("spdx", "huggingface"):
                note = Normalized(named.expression, named.method, f"license: other, license_name {name!r}")
                found = Evidence(
                    f"{source} license_name", location, str(name), note, CONFIDENCE[f"{source} license_name"]
                )
                return [found]
        why = f"the {source} says 'other' (license_name {name!r}, license_link {link!r}); read the linked terms"
        unread = Normalized(None, "none", why)
        return [Evidence(f"{source} license", location, "other", unread, CONFIDENCE[f"{source} license"])]
    readings = [normalizer.normalize(value) for value in licenses]
    unread = [r.note for r in readings if not r.known]
    if unread:
        normalized = Normalized(None, "none", "; ".join(unread))
    elif len(readings) == 1:
        normalized = readings[0]
    else:  # a list of licences on one card: all of them apply
        combined = normalizer.normalize(" AND ".join(f"({r.expression})" for r in readings))
        normalized = Normalized(combined.expression, combined.method, "a list of licences, all applying")
    return [Evidence(f"{source} license", location, ", ".join(licenses), normalized, CONFIDENCE[f"{source} license"])]


def card_item(path: Path, name: str, normalizer: Normalizer, kind: Kind | None = None) -> Item:
    """The inventory item of one card; ``kind`` overrides the model/dataset guess from its keys."""
    location = str(path)
    try:
        data = front_matter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        unread = Normalized(None, "none", f"the card could not be read: {exc}")
        return Item(
            name=name,
            kind=kind or Kind.MODEL,
            evidence=[Evidence("card license", location, "", unread, CONFIDENCE["card license"])],
            problems=[Problem("unreadable", f"{location}: {exc}")],
            source=location,
        )
    if kind is None:
        kind = Kind.DATASET if DATASET_KEYS & set(data) else Kind.MODEL
    links = [Link("base_model", ref) for ref in _as_list(data.get("base_model"))]
    links += [Link("datasets", ref) for ref in _as_list(data.get("datasets"))]
    link = data.get("license_link")
    return Item(
        name=name,
        kind=kind,
        version=str(data["version"]) if data.get("version") is not None else None,
        evidence=license_evidence(data, location, normalizer),
        links=links,
        source=location,
        license_link=str(link) if link else None,
    )


def scan_cards(root: str | Path, normalizer: Normalizer) -> list[Item]:
    """Every ``README.md`` below ``root``; an item's name is its folder relative to ``root`` (``org/model``)."""
    root = Path(root)
    if root.is_file():
        return [card_item(root, root.resolve().parent.name, normalizer)]
    if not root.is_dir():
        raise InputError(
            f"card path {root} does not exist; give a README.md or a folder of <org>/<name>/README.md cards"
        )
    cards = sorted(root.rglob(CARD_NAME))
    if not cards:
        raise InputError(f"no {CARD_NAME} found below {root}; cards live at <org>/<name>/{CARD_NAME}")
    return [
        card_item(card, card.parent.relative_to(root).as_posix() or root.resolve().name, normalizer) for card in cards
    ]
