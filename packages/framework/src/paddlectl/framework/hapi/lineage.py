"""Lineage of trained weights: the data, base weights and code that made them, kept in the artifact.

A licence audit (``paddlectl license audit --weights DIR``) follows this record to the terms a model
inherits from what it was trained on; without it our checkpoints and exported models are opaque.
The record (``lineage_version`` 1) is JSON: ``datasets`` and ``base_model`` entries, each with a
``name``, ``license`` (an SPDX id or Hugging Face id, a list of them, or null when unknown) and
``source``, and ``code`` (the paddlectl-framework version, plus the git commit when the framework
runs from a git checkout or was installed from a git URL).

Licences: the datasets we ship readers for carry theirs below. A folder of the user's own data,
or a weights file, is licensed by a dataset/model card (a ``README.md`` with ``license:`` front
matter, the Hugging Face convention) in its folder or the folder above, else recorded as unknown.
"""

from __future__ import annotations

import functools
import json
import subprocess
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import yaml

from . import checkpoint_dir

LINEAGE_VERSION = 1
SPLITS = ("Train", "Eval")
PATH_KEYS = ("root", "data_file", "data_dir", "dataset_dir", "dataset_root", "manifest")  # manifest: speech
"""Where a dataset section names its files: our readers, PaddleOCR (data_dir), PaddleDetection
(dataset_dir) and PaddleSeg (dataset_root)."""
CARD = "README.md"
CARD_KEYS = ("license", "license_name", "license_link")

CIFAR = "https://www.cs.toronto.edu/~kriz/cifar.html"
READER_DATASETS = {
    "Digits": {
        "name": "uci-optdigits",
        "license": "CC-BY-4.0",
        "source": "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
    },
    # The CIFAR page states no licence; an unknown licence is recorded as such, never guessed.
    "Cifar10": {"name": "cifar-10", "license": None, "source": CIFAR},
    "Cifar100": {"name": "cifar-100", "license": None, "source": CIFAR},
    # paddlectl-rec's readers (research-use-only MovieLens: a commercial audit must deny its models)
    "MovieLens100K": {
        "name": "movielens-100k",
        "license": "LicenseRef-paddlectl-grouplens-movielens",
        "source": "https://grouplens.org/datasets/movielens/100k/",
    },
    "Adult": {"name": "uci-adult", "license": "CC-BY-4.0", "source": "https://archive.ics.uci.edu/dataset/2/adult"},
}
"""The shipped dataset readers (config ``dataset.name``) and the licence of the data they read."""


def _card_licence(folder: Path) -> dict[str, Any]:
    """``license``/``license_name``/``license_link`` of the card in ``folder`` or above it ({} if none)."""
    for candidate in (folder / CARD, folder.parent / CARD):
        try:
            lines = [line.rstrip() for line in candidate.read_text(encoding="utf-8").lstrip("\ufeff").splitlines()]
            end = lines.index("---", 1) if lines[:1] == ["---"] else 0
            data = yaml.safe_load("\n".join(lines[1:end])) if end else None
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
            continue  # no card, or one that is not readable: the licence stays unknown
        if isinstance(data, dict) and data.get("license"):
            found = {key: data[key] for key in CARD_KEYS if data.get(key)}
            return {**found, "license_source": str(candidate.resolve())}
    return {}


def _dataset_entry(section: dict) -> dict[str, Any]:
    name = str(section.get("name"))
    if name in READER_DATASETS:
        return dict(READER_DATASETS[name])
    where = next((section[key] for key in PATH_KEYS if isinstance(section.get(key), str)), None)
    if where is None:
        return {"name": name, "license": None, "source": None}
    path = Path(where).expanduser().resolve()
    return {
        "name": where,
        "license": None,
        "source": str(path),
        **_card_licence(path if path.is_dir() else path.parent),
    }


def _datasets(config: dict) -> list[dict[str, Any]]:
    """Each dataset the config trains or selects on, once, with the splits that used it."""
    found: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        section = (config.get(split) or {}).get("dataset")
        if isinstance(section, dict) and section.get("name"):
            entry = _dataset_entry(section)
            found.setdefault(entry["name"], {**entry, "used_for": []})["used_for"].append(split)
    return list(found.values())


def recorded_lineage(weights: str | Path) -> dict | None:
    """The lineage in the checkpoint whose weights ``weights`` names (a checkpoint directory, a run
    directory with ``best/``, or a checkpoint's ``model.pdparams``), or None when it records none."""
    path = Path(weights)
    if path.is_file():
        folder = path.parent if path.name == checkpoint_dir.MODEL_FILE else None
    elif (path / checkpoint_dir.MODEL_FILE).is_file():
        folder = path
    else:
        folder = path / "best"
    state = folder / checkpoint_dir.STATE_FILE if folder is not None else None
    try:
        lineage = json.loads(state.read_text(encoding="utf-8")).get("lineage") if state else None
    except (OSError, ValueError, AttributeError):
        return None  # no state.json, or one that is damaged: the weights' lineage is not known
    return lineage if isinstance(lineage, dict) else None


def _base_model(config: dict) -> list[dict[str, Any]]:
    pretrained = (config.get("Global") or {}).get("pretrained_model")
    if not pretrained:
        return []
    path = Path(pretrained).expanduser().resolve()
    entry = {"name": pretrained, "license": None, "source": str(path)}
    entry.update(_card_licence(path if path.is_dir() else path.parent))
    ancestors = recorded_lineage(path)
    if ancestors is not None:
        entry["lineage"] = ancestors
    return [entry]


def _git(folder: str, *args: str) -> str | None:
    try:
        done = subprocess.run(  # noqa: S603 - fixed git arguments, no shell
            ["git", "-C", folder, *args], capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


@functools.cache
def code_version() -> dict[str, Any]:
    """The paddlectl-framework version, and the git commit the code came from when that is known."""
    try:
        dist = distribution("paddlectl-framework")
    except PackageNotFoundError:
        return {"name": "paddlectl-framework", "version": None}
    record: dict[str, Any] = {"name": "paddlectl-framework", "version": dist.version}
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    if direct.get("vcs_info", {}).get("commit_id"):
        record["git_commit"] = direct["vcs_info"]["commit_id"]
    elif direct.get("dir_info", {}).get("editable") and direct.get("url", "").startswith("file://"):
        folder = unquote(urlparse(direct["url"]).path)
        commit = _git(folder, "rev-parse", "HEAD")
        if commit:
            changes = _git(folder, "status", "--porcelain", "--untracked-files=no", "--", ".")
            record.update(git_commit=commit, git_dirty=bool(changes))
    return record


def build_lineage(config: dict) -> dict[str, Any]:
    """The lineage record of weights trained with ``config``: its datasets, base weights and the code."""
    return {
        "lineage_version": LINEAGE_VERSION,
        "datasets": _datasets(config),
        "base_model": _base_model(config),
        "code": code_version(),
    }
