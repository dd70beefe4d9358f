"""Feature rows as users hold them: dicts, a CSV file with a header, JSON lines, or one JSON object.

Every row must carry every feature column; a missing one is named with its row, not discovered
as a KeyError deep in the encoder.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import DataError, FeatureError
from ..table import Table

SUFFIXES = (".csv", ".jsonl", ".json")


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a ``.csv`` (header line), ``.jsonl`` (one object a line) or ``.json`` (an object or a list)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(f"{path}: feature rows must be a .csv, .jsonl or .json file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read feature rows from {path}: {exc}") from None
    try:
        if path.suffix.lower() == ".csv":
            rows = list(csv.DictReader(text.splitlines()))
        elif path.suffix.lower() == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
            rows = data if isinstance(data, list) else [data]
    except (json.JSONDecodeError, csv.Error) as exc:
        raise DataError(f"{path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise DataError(f"{path} holds no feature rows (each row must be an object of column: value)")
    return [dict(r) for r in rows]


def rows_table(rows: Sequence[Mapping], columns: Sequence[str], lists: Sequence[str] = ()) -> Table:
    """The ``columns`` of ``rows`` as a Table (object arrays: ids stay as written). A column in
    ``lists`` (multi-valued) may hold an empty list or ``""`` (a user with no history yet)."""
    for number, row in enumerate(rows, start=1):
        missing = [c for c in columns if c not in row or row[c] is None or (row[c] == "" and c not in lists)]
        if missing:
            raise FeatureError(f"row {number} has no value for feature column {missing[0]!r}")
    table = {}
    for c in columns:
        column = np.empty(len(rows), dtype=object)
        column[:] = [row[c] for row in rows]
        table[c] = column
    return Table(table)
