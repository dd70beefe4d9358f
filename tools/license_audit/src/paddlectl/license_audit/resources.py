"""Where the curated data shipped inside the package lives (licences, aliases, policies, assets)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from .errors import KnowledgeBaseError
from .yamlio import safe_load


def data_path(*parts: str) -> Path:
    """Path of a file under the package's ``data/`` folder."""
    return Path(str(files("paddlectl.license_audit").joinpath("data", *parts)))


@cache
def load_data(name: str) -> Any:
    """Parse one of the package's YAML data files once; a broken file is a packaging bug."""
    path = data_path(name)
    try:
        return safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise KnowledgeBaseError(f"cannot read packaged data {path}: {exc}; reinstall paddlectl-license-audit") from exc
