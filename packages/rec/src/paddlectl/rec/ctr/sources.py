"""The data a ``rec.ctr`` config names (``Train.dataset``), split and encoded once per process.

``MovieLens100K`` joins each rating with its user's and movie's features (``genre``: a film's first
genre, ``genres``: all of them, a multi-valued column); ``Adult`` is the census
table; ``Rows`` is a user's own CSV/JSON-lines file. The split (leave-last-out by time, or random
with a seed) is part of the config, so ``train``, ``export`` and ``eval`` rebuild the same split
and the same fitted encoder from it; ``history: {length: N}`` adds each row's user history, made
from the training half only (``history``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from paddlectl.framework.hapi.builders import check_keys, require_mapping

from ..data import adult, movielens_100k
from ..errors import ConfigError
from ..splits import leave_last_out, random_split
from ..table import Table
from .features import FeatureEncoder, binary_labels, check_values, parse_features
from .history import add_history
from .rows import read_rows, rows_table

DATASET_KEYS = ("name", "path", "split", "max_rows", "features", "history")
MAX_HISTORY = 1024
SPLIT_KEYS = ("name", "n", "fractions", "seed", "validation")


def _movielens() -> Table:
    ml = movielens_100k()
    ratings, users, items = ml.ratings, ml.users, ml.items
    user_row = {u: i for i, u in enumerate(users.id)}
    item_row = {m: i for i, m in enumerate(items.id)}
    u = np.asarray([user_row[x] for x in ratings.user_id])
    m = np.asarray([item_row[x] for x in ratings.item_id])
    genre = np.asarray([g[0] if g else "unknown" for g in items.genres])
    genres = np.empty(len(items), dtype=object)
    genres[:] = [g or ("unknown",) for g in items.genres]
    return Table(
        {
            **ratings.columns,
            **{c: users[c][u] for c in ("age", "gender", "occupation", "zip_code")},
            "year": items.year[m],
            "genre": genre[m],
            "genres": genres[m],
        }
    )


def _rows(path: str, lists: tuple[str, ...] = ()) -> Table:
    """A user's rows file; the multi-valued columns ``lists`` may hold empty cells (no values)."""
    rows = read_rows(path)
    return rows_table(rows, list(rows[0]), lists)


SOURCES = {"MovieLens100K": _movielens, "Adult": adult, "Rows": _rows}


@dataclass(frozen=True)
class Prepared:
    encoder: FeatureEncoder
    train: Table
    eval: Table


def check_dataset(section) -> None:
    require_mapping(section, "Train.dataset")
    check_keys(section, "Train.dataset", DATASET_KEYS)
    name = section.get("name")
    if name not in SOURCES:
        raise ConfigError(f"Train.dataset.name is {name!r}; use one of {', '.join(SOURCES)}")
    if (name == "Rows") != ("path" in section):
        raise ConfigError("Train.dataset.path (a .csv/.jsonl file) is for name: Rows, and Rows needs it")
    split = section.get("split") or {}
    require_mapping(split, "Train.dataset.split")
    check_keys(split, "Train.dataset.split", SPLIT_KEYS)
    if split.get("name", "random") not in ("random", "leave_last_out"):
        raise ConfigError(f"Train.dataset.split.name is {split.get('name')!r}; use random or leave_last_out")
    if not isinstance(split.get("validation", False), bool):
        raise ConfigError(f"Train.dataset.split.validation is {split['validation']!r}; give true or false")
    history = section.get("history")
    if history is not None:
        require_mapping(history, "Train.dataset.history")
        check_keys(history, "Train.dataset.history", ("length",))
        length = history.get("length")
        if not isinstance(length, int) or isinstance(length, bool) or not 0 < length <= MAX_HISTORY:
            raise ConfigError(f"Train.dataset.history.length is {length!r}; give the items kept, 1 to {MAX_HISTORY}")
    rows = section.get("max_rows")
    if rows is not None and (not isinstance(rows, int) or isinstance(rows, bool) or rows < 10):
        raise ConfigError(f"Train.dataset.max_rows is {rows!r}; give an int >= 10 or leave it out")


def _split(table: Table, split: dict) -> tuple[Table, Table]:
    """``(train, eval)``. With ``validation: true`` the eval rows are a hold-out of the training part
    made by the same rule (each user's latest rating before the test one), the test rows left out:
    settings and epochs are chosen on them without reading the test split."""
    if split.get("name", "random") == "leave_last_out":
        train, test = leave_last_out(table, int(split.get("n", 1)))
    else:
        train, test = random_split(table, split.get("fractions", (0.8, 0.2)), int(split.get("seed", 0)))
    return _split(train, {**split, "validation": False}) if split.get("validation") else (train, test)


@lru_cache(maxsize=4)
def _prepare(dataset_json: str, features_json: str) -> Prepared:
    dataset, spec = json.loads(dataset_json), parse_features(json.loads(features_json))
    table = _rows(dataset["path"], spec.multi_valued) if "path" in dataset else SOURCES[dataset["name"]]()
    if dataset.get("max_rows"):
        table = table.take(np.arange(min(len(table), dataset["max_rows"])))
    check_values(spec, table)
    train, test = _split(table, dataset.get("split") or {})
    if dataset.get("history"):
        train, test = add_history(train, test, binary_labels(spec.label, train), dataset["history"]["length"])
    return Prepared(FeatureEncoder.fit(spec, train), train, test)


def features_section(config: dict):
    """``Train.dataset.features``: the feature lists and label (the data's columns the model reads)."""
    section = (config.get("Train") or {}).get("dataset")
    require_mapping(section, "Train.dataset")
    if "features" not in section:
        raise ConfigError("Train.dataset needs features: {sparse: [columns], dense: [columns], label: {name: ...}}")
    return section["features"]


def prepare(config: dict) -> Prepared:
    """The split and the encoder fitted on its training part (cached: train, export and eval reuse it)."""
    section = (config.get("Train") or {}).get("dataset")
    check_dataset(section)
    data = {k: v for k, v in section.items() if k != "features"}
    return _prepare(json.dumps(data, sort_keys=True), json.dumps(features_section(config), sort_keys=True))
