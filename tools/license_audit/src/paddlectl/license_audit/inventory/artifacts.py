"""Models given with ``--weights``: weight files, paddlectl's saved models and training checkpoints.

paddlectl records a lineage in what it writes: ``state.json`` of a training checkpoint,
``model.json`` of an exported model, the ``lineage`` key of an exported ONNX file's
``metadata_props``. The record lists the datasets and base weights the training config used, in
the card convention (``name``, ``license``, ``license_name``, ``license_link``, ``source``), a base
checkpoint with its own nested ``lineage``. Each entry becomes an inventory item linked to the
model, so what a dataset's licence passes on reaches the model (model <- dataset). The model's own
licence is not in the record (it is the owner's choice): a ``README.md`` model card in its folder
declares it, as on the Hugging Face Hub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..lineage import MAX_LINEAGE_DEPTH
from ..model import CONFIDENCE, Evidence, FileRef, Item, Kind, Link
from ..normalize import Normalized, Normalizer
from .cards import CARD_NAME, card_item, license_evidence
from .manifest import RELATION_KIND
from .weights import sha256_of, weight_evidence, weight_item, weight_metadata

RECORDS = {  # the file describing the artifact -> its format, the weights beside it, what it is, what writes it
    "model.json": ("paddlectl-inference-model", "model.safetensors", "saved model", "export"),
    "state.json": ("paddlectl-train-state", "model.pdparams", "training checkpoint", "train"),
}
RECORDED_RELATIONS = ("datasets", "base_model")
ACCEPTED = (
    "an .onnx or .safetensors file, a paddlectl model directory (model.json) or a training checkpoint (state.json)"
)


def lineage_items(owner: Item, record: Any, location: str, normalizer: Normalizer, depth: int = 0) -> list[Item]:
    """Items for every ancestor in a paddlectl lineage record, linked from ``owner`` (recursively, at most
    ``MAX_LINEAGE_DEPTH`` base checkpoints deep: a deeper record is hostile, not a real training history)."""
    if not isinstance(record, dict):
        raise InputError(f"{location}: the lineage record must be a mapping; write the model again with paddlectl")
    if depth > MAX_LINEAGE_DEPTH:
        raise InputError(
            f"{location}: the lineage nests more than {MAX_LINEAGE_DEPTH} base checkpoints deep; "
            "write the model again with paddlectl"
        )
    items = []
    for relation in RECORDED_RELATIONS:
        entries = record.get(relation, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) and e.get("name") for e in entries):
            raise InputError(f"{location}: lineage {relation} must be a list of entries that have a name")
        for entry in entries:
            _check_texts(entry, f"{location}: lineage {relation} entry {str(entry['name'])[:80]!r}")
            where = entry.get("license_source") or f"{location}#lineage.{relation}"
            ancestor = Item(
                name=str(entry["name"]),
                kind=RELATION_KIND[relation],
                evidence=license_evidence(entry, str(where), normalizer, "lineage record"),
                source=entry.get("source"),
                license_link=entry.get("license_link"),
            )
            owner.links.append(Link(relation, ancestor.name))
            items.append(ancestor)
            if "lineage" in entry:
                items += lineage_items(ancestor, entry["lineage"], location, normalizer, depth + 1)
    return items


def _check_texts(entry: dict, where: str) -> None:
    """The entry's free-text fields are strings (or absent): they go into reports and SBOMs as they are."""
    for key in ("license_name", "license_link", "license_source", "source"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise InputError(f"{where}: {key} must be a string, found {type(entry[key]).__name__}")


def _json(text: str, where: str, fix: str) -> Any:
    """JSON from a record; a document nested past what the JSON reader follows is refused like bad JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        problem = "nests too deeply" if isinstance(exc, RecursionError) else f"is not JSON ({exc})"
        raise InputError(f"{where} {problem}; {fix}") from None


def _unlicensed(location: str, what: str, verb: str, has_lineage: bool) -> Evidence:
    why = (
        f"the {what} names no licence of its own (paddlectl records where weights came from, not the licence "
        f"you give them); declare it in a model card: a {CARD_NAME} beside {Path(location).name} whose front "
        "matter says 'license: ...'"
    )
    if not has_lineage:
        why += f"; it also records no lineage (written before paddlectl recorded one): {verb} it again"
    source = "lineage record license"
    return Evidence(source, location, "", Normalized(None, "none", why), CONFIDENCE[source])


def _record_items(folder: Path, record_name: str, normalizer: Normalizer) -> list[Item]:
    fmt, weights_name, what, verb = RECORDS[record_name]
    location = str(folder / record_name)
    try:
        text = (folder / record_name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {location}: {exc}; give an intact {what}") from None
    record = _json(text, location, f"give an intact {what}")
    if not isinstance(record, dict) or record.get("format") != fmt:
        raise InputError(f"{location} is not a {fmt} file; give {ACCEPTED}")
    weights = folder / weights_name
    found = weight_evidence(weights, normalizer)[0] if weights.suffix == ".safetensors" and weights.is_file() else None
    evidence, links = [found] if found else [], []
    if (folder / CARD_NAME).is_file():
        card = card_item(folder / CARD_NAME, str(folder), normalizer, Kind.MODEL)
        evidence, links = evidence + card.evidence, card.links
    lineage = record.get("lineage")
    item = Item(
        name=str(folder),
        kind=Kind.MODEL,
        evidence=evidence or [_unlicensed(location, what, verb, lineage is not None)],
        links=links,
        files=[FileRef(str(weights), sha256_of(weights))] if weights.is_file() else [],
        source=str(folder),
    )
    return [item, *([] if lineage is None else lineage_items(item, lineage, location, normalizer))]


def artifact_items(path: str | Path, normalizer: Normalizer) -> list[Item]:
    """The model at ``path`` and every ancestor its lineage record names."""
    path = Path(path)
    if path.is_dir():
        record_name = next((name for name in RECORDS if (path / name).is_file()), None)
        if record_name is None:
            raise InputError(f"{path} holds neither model.json nor state.json; give {ACCEPTED}")
        return _record_items(path, record_name, normalizer)
    if not path.is_file():
        raise InputError(f"{path} does not exist; give {ACCEPTED}")
    metadata = weight_metadata(path)
    item = weight_item(path, normalizer, metadata)
    if "lineage" not in metadata:
        return [item]
    lineage = _json(metadata["lineage"], f"{path}: the 'lineage' metadata", "export the model again")
    return [item, *lineage_items(item, lineage, f"{path}#lineage", normalizer)]
