"""MovieLens-100k as retrieval data: (user, item) positives, feature tables, histories, held-out items.

Every rating is an implicit positive (the user chose to watch and rate the film), as RecBole's
general recommenders read ml-100k. The split is the suite's (``leave_last_out`` per user by time, or
a seeded ``random_split``), the vocabularies are built from training data only, so a user who
appears only in the test part is a cold-start user (row 0) exactly as in serving.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import numpy as np

from ..data import UNSEEN, Vocab, leave_last_out, movielens_100k, random_split
from ..errors import ConfigError, DataError

__all__ = ["AGE_BUCKETS", "DATASET_KEYS", "RetrievalData", "YEAR_BUCKETS", "retrieval_data"]

DATASET_KEYS = ("name", "root", "split", "holdout", "test_fraction", "seed")
SPLITS = ("leave_last_out", "random")
AGE_BUCKETS = (18, 25, 35, 45, 50, 56)  # MovieLens-1M's age groups, applied to ml-100k's ages
YEAR_BUCKETS = (1950, 1970, 1980, 1990, 1995)


@dataclass(frozen=True)
class RetrievalData:
    """Everything a two-tower model and its evaluation need, as index arrays (row 0 = unseen)."""

    users: Vocab
    items: Vocab
    titles: list[str]  # per item row (row 0: "")
    user_features: np.ndarray  # [user rows, 3] int64: gender, age bucket, occupation rows
    user_feature_sizes: tuple[int, int, int]
    item_genres: np.ndarray  # [item rows, genres] float32 multi-hot
    item_year: np.ndarray  # [item rows] int64 year bucket (0: unknown)
    train_pairs: np.ndarray  # [n, 2] int64 (user row, item row)
    history: np.ndarray  # [user rows, item rows] bool: rated in training
    popularity: np.ndarray  # [item rows] float64 training interactions per item
    test_users: np.ndarray  # [t] int64 user rows (0 for cold-start users)
    test_raw_users: list[str]
    test_targets: np.ndarray  # [t, T] int64 item rows padded with -1

    @property
    def num_items(self) -> int:
        return self.items.size


def _buckets(values: np.ndarray, edges: tuple[int, ...], unknown_zero: bool = False) -> np.ndarray:
    rows = np.searchsorted(np.asarray(edges), values, side="right") + 1
    return np.where(values <= 0, 0, rows) if unknown_zero else rows


def check_dataset(section) -> dict:
    """The ``Train.dataset`` section with defaults, or a ConfigError naming the bad key."""
    from paddlectl.framework.hapi.builders import check_keys

    section = dict(section or {})
    check_keys(section, "Train.dataset", DATASET_KEYS)
    if section.get("name", "MovieLens100K") != "MovieLens100K":
        raise ConfigError(f"Train.dataset.name is {section['name']!r}; rec.retrieval reads MovieLens100K")
    split = section.get("split", "leave_last_out")
    if split not in SPLITS:
        raise ConfigError(f"Train.dataset.split is {split!r}; choose {' or '.join(SPLITS)}")
    for key, default in (("holdout", 1), ("seed", 0)):
        value = section.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < (1 if key == "holdout" else 0):
            raise ConfigError(
                f"Train.dataset.{key} is {value!r}; give a {'positive' if key == 'holdout' else 'non-negative'} integer"
            )
    fraction = section.get("test_fraction", 0.2)
    if not isinstance(fraction, int | float) or not 0 < fraction < 1:
        raise ConfigError(f"Train.dataset.test_fraction is {fraction!r}; give a number in (0, 1)")
    return {"root": section.get("root"), "split": split, "holdout": section.get("holdout", 1),
            "seed": section.get("seed", 0), "test_fraction": float(fraction)}  # fmt: skip


def retrieval_data(section) -> RetrievalData:
    """The data a ``Train.dataset`` section describes, built once per process and section."""
    return _cached(json.dumps(check_dataset(section), sort_keys=True))


@functools.lru_cache(maxsize=4)
def _cached(key: str) -> RetrievalData:
    spec = json.loads(key)
    ml = movielens_100k(spec["root"])
    if spec["split"] == "leave_last_out":
        train, test = leave_last_out(ml.ratings, spec["holdout"])
    else:
        fraction = spec["test_fraction"]
        train, test = random_split(ml.ratings, (1 - fraction, fraction), spec["seed"])
    users, items = Vocab(train["user_id"]), Vocab(ml.items["id"])
    item_rows, unknown = items.encode(ml.items["id"])
    if unknown:
        raise DataError("the item table repeats an id; check the ml-100k.item file")
    order = np.argsort(item_rows)
    titles = ["", *[str(t) for t in ml.items["title"][order]]]
    genre_names = sorted({g for genres in ml.items["genres"] for g in genres})
    item_genres = np.zeros((items.size, len(genre_names)), np.float32)
    for row, genres in zip(item_rows, ml.items["genres"], strict=True):
        item_genres[row, [genre_names.index(g) for g in genres]] = 1.0
    item_year = np.zeros(items.size, np.int64)
    item_year[item_rows] = _buckets(ml.items["year"], YEAR_BUCKETS, unknown_zero=True)

    user_rows, _ = users.encode(ml.users["id"])
    known = user_rows != UNSEEN
    genders, occupations = Vocab(ml.users["gender"]), Vocab(ml.users["occupation"])
    user_features = np.zeros((users.size, 3), np.int64)
    user_features[user_rows[known], 0] = genders.encode(ml.users["gender"][known])[0]
    user_features[user_rows[known], 1] = _buckets(ml.users["age"][known], AGE_BUCKETS)
    user_features[user_rows[known], 2] = occupations.encode(ml.users["occupation"][known])[0]

    train_users, _ = users.encode(train["user_id"])
    train_items, unrated = items.encode(train["item_id"])
    if unrated:
        raise DataError(f"{unrated} rating(s) name items missing from the item table")
    history = np.zeros((users.size, items.size), bool)
    history[train_users, train_items] = True
    popularity = np.bincount(train_items, minlength=items.size).astype(np.float64)

    test_users, _ = users.encode(test["user_id"])
    test_items, _ = items.encode(test["item_id"])
    raw = np.asarray(test["user_id"]).astype(str)
    keys, first = np.unique(raw, return_index=True)
    keys = keys[np.argsort(first)]
    width = max(int(np.max(np.unique(raw, return_counts=True)[1])), 1) if len(raw) else 1
    targets = np.full((len(keys), width), -1, np.int64)
    rows = np.zeros(len(keys), np.int64)
    for n, key in enumerate(keys):
        mine = raw == key
        wanted = test_items[mine]
        targets[n, : len(wanted)] = wanted
        rows[n] = test_users[mine][0]
    return RetrievalData(
        users=users, items=items, titles=titles, user_features=user_features,
        user_feature_sizes=(genders.size, len(AGE_BUCKETS) + 2, occupations.size), item_genres=item_genres,
        item_year=item_year, train_pairs=np.stack([train_users, train_items], axis=1), history=history,
        popularity=popularity, test_users=rows, test_raw_users=[str(k) for k in keys], test_targets=targets,
    )  # fmt: skip
