"""Licences named inside weight files: ONNX ``metadata_props`` and the safetensors ``__metadata__``.

Exporters may record the licence of the weights in the file itself; when they do, it is evidence
as good as a card, and a manifest that says otherwise is worth a reviewer's look.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import InputError
from ..model import CONFIDENCE, Evidence, FileRef, Item, Kind
from ..normalize import Normalized, Normalizer

LICENSE_KEYS = ("license", "licence", "license_name", "spdx_license")
LINK_KEYS = ("license_link", "license_url")
WEIGHT_SUFFIXES = (".onnx", ".safetensors")


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weight_metadata(path: Path) -> dict[str, str]:
    """The string metadata stored in an ONNX or safetensors file."""
    if path.suffix == ".onnx":
        import onnx

        try:
            model = onnx.load(str(path), load_external_data=False)
        except Exception as exc:  # noqa: BLE001 - onnx raises several types for a bad file
            raise InputError(f"{path} is not a readable ONNX model ({exc}); check the file or its sha256") from exc
        return {prop.key: prop.value for prop in model.metadata_props}
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        try:
            with safe_open(str(path), framework="numpy") as handle:
                return dict(handle.metadata() or {})
        except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types
            raise InputError(f"{path} is not a readable safetensors file ({exc}); check the file") from exc
    raise InputError(f"{path}: weight metadata is read from {' and '.join(WEIGHT_SUFFIXES)} files only")


def weight_evidence(
    path: Path, normalizer: Normalizer, metadata: dict[str, str] | None = None
) -> tuple[Evidence | None, str | None]:
    """Licence evidence and licence link from a weight file's metadata (None where it names none)."""
    metadata = {key.lower(): value for key, value in (weight_metadata(path) if metadata is None else metadata).items()}
    link = next((metadata[k] for k in LINK_KEYS if metadata.get(k)), None)
    for key in LICENSE_KEYS:
        if metadata.get(key):
            value = metadata[key]
            normalized = normalizer.normalize(value)
            read = Normalized(normalized.expression, normalized.method, f"metadata key {key!r}: {normalized.note}")
            return Evidence("weights metadata", f"{path}#{key}", value, read, CONFIDENCE["weights metadata"]), link
    return None, link


def weight_item(path: str | Path, normalizer: Normalizer, metadata: dict[str, str] | None = None) -> Item:
    """A model item for a bare weight file, licensed by its own metadata (UNKNOWN when it has none)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"weight file {path} does not exist; give the path of an .onnx or .safetensors file")
    evidence, link = weight_evidence(path, normalizer, metadata)
    if evidence is None:
        none = Normalized(None, "none", "the file's metadata names no licence")
        evidence = Evidence("weights metadata", str(path), "", none, CONFIDENCE["weights metadata"])
    return Item(
        name=path.name,
        kind=Kind.MODEL,
        evidence=[evidence],
        files=[FileRef(str(path), sha256_of(path))],
        source=str(path),
        license_link=link,
    )
