"""The JSON files of a checkpoint directory, read with one-line errors naming the file."""

from __future__ import annotations

import json
from pathlib import Path

from paddlectl.framework.errors import CheckpointError

__all__ = ["read_json"]


def read_json(path: Path, kind: type = dict, required: bool = False):
    """The file's value, which must be a ``kind`` (dict or list); an absent optional file reads as
    an empty one, an absent required one is a CheckpointError, as is a malformed one."""
    path = Path(path)
    if not path.is_file():
        if required:
            raise CheckpointError(f"{path}: no such file (the checkpoint directory needs it)")
        return kind()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, kind):
        raise CheckpointError(f"{path}: expected a JSON {kind.__name__}, got {type(data).__name__}")
    return data
