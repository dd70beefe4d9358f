"""Licence manifests of the suite's data, and the manifest of a model trained on it.

``movielens-100k.asset.yaml`` (GroupLens' research-use terms: no commercial use) and
``uci-adult.asset.yaml`` (CC BY 4.0) describe the files paddlectl.rec.data reads. An exported
``rec`` model records the reader it was trained with (``MovieLens100K``, ``Adult``) in its lineage;
``model_manifest`` turns that record into an asset.yaml whose lineage carries the dataset's
licence inline, so ``paddlectl license audit --assets model.asset.yaml`` sees what the model
inherits without any other file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import yaml

from ..errors import DataError

HERE = Path(__file__).parent
MANIFESTS = {"MovieLens100K": HERE / "movielens-100k.asset.yaml", "Adult": HERE / "uci-adult.asset.yaml"}
"""The manifest of each dataset reader of ``Train.dataset.name``."""
INLINE_KEYS = ("name", "kind", "version", "license", "license_link", "source", "supplier")


def dataset_asset(reader: str) -> dict | None:
    """The asset entry (without its files) of the data a reader opens; None for a user's own rows."""
    if reader not in MANIFESTS:
        return None
    (asset,) = yaml.safe_load(MANIFESTS[reader].read_text(encoding="utf-8"))["assets"]
    return {k: asset[k] for k in INLINE_KEYS if k in asset}


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def model_manifest(model_dir: str | Path, manifest: str | Path, license: str = "NOASSERTION") -> dict:  # noqa: A002
    """The asset.yaml mapping, to be written at ``manifest``, of an exported model directory: its
    files' sha256 and, as inline lineage, every dataset its ``model.json`` lineage names that this
    suite ships a manifest for.

    ``license`` is the model's own licence (the trainer's choice; NOASSERTION when not stated);
    what it inherits from its data is the auditor's finding, not this function's.
    """
    model_dir = Path(model_dir)
    try:
        meta = json.loads((model_dir / "model.json").read_text(encoding="utf-8"))
        readers = [entry["name"] for entry in meta["lineage"]["datasets"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"{model_dir} is not an exported model with a lineage record ({exc}); export it again"
        ) from None
    datasets = [a for a in (dataset_asset(str(r)) for r in readers) if a is not None]
    files = sorted(p for p in model_dir.iterdir() if p.is_file())
    asset = {
        "name": model_dir.resolve().name,
        "kind": "model",
        "version": "1",
        "source": str(model_dir.resolve()),
        "license": license,
        "description": f"A {meta.get('preprocess', {}).get('task', 'rec')} model exported by paddlectl.",
        "files": [{"path": p.name, "sha256": _sha256(p)} for p in files],
    }
    if datasets:
        asset["lineage"] = {"datasets": datasets}
    root = os.path.relpath(model_dir.resolve(), Path(manifest).resolve().parent)
    return {"schema_version": 1, "root": root, "assets": [asset]}
