"""Each rating's user history: the user's earlier rated items, as multi-valued feature columns.

``Train.dataset.history: {length: N}`` adds three columns to both halves of the split: ``history``
(the user's last ``N`` rated items), ``history_liked`` and ``history_disliked`` (the last ``N``
whose label was positive / negative). They are read from the **training rows only** and only from
those strictly earlier than the row's own timestamp: never the row's own item, nothing at the same
second, nothing later, and nothing of the evaluation rows, so a history holds what a server would
have known when the rating was made. With FM, history x target-item products are the item-item
similarities (FISM, SVD++, DIN) that a model of one-hot ids cannot express.
"""

from __future__ import annotations

import numpy as np

from ..errors import FeatureError
from ..table import Table

COLUMNS = ("history", "history_liked", "history_disliked")
KEYS = ("user_id", "item_id", "timestamp")


def _codes(*columns: np.ndarray) -> list[np.ndarray]:
    """Dense integer codes of values shared across ``columns`` (ids compared as strings, times as numbers)."""
    _, inverse = np.unique(np.concatenate(columns), return_inverse=True)
    return np.split(inverse.reshape(-1), np.cumsum([len(c) for c in columns])[:-1])


def _earlier(train: Table, keep: np.ndarray, query: Table, length: int) -> np.ndarray:
    """Per ``query`` row, the items of the ``keep`` training rows of its user strictly before its
    timestamp, the latest ``length`` in time order (ties in file order), as a tuple."""
    users, query_users = _codes(train["user_id"].astype(str)[keep], query["user_id"].astype(str))
    times, query_times = _codes(train["timestamp"].astype(np.float64)[keep], query["timestamp"].astype(np.float64))
    items = train["item_id"][keep]
    order = np.lexsort((np.arange(len(items)), times, users))
    span = int(max(times.max(initial=0), query_times.max(initial=0))) + 1
    keys = users[order].astype(np.int64) * span + times[order]
    start = np.searchsorted(keys, query_users.astype(np.int64) * span, side="left")  # the user's first row
    stop = np.searchsorted(keys, query_users.astype(np.int64) * span + query_times, side="left")  # first not earlier
    ordered = items[order].tolist()
    column = np.empty(len(query), dtype=object)
    column[:] = [tuple(ordered[max(a, b - length) : b]) for a, b in zip(start.tolist(), stop.tolist(), strict=True)]
    return column


def add_history(train: Table, evaluation: Table, liked: np.ndarray, length: int) -> tuple[Table, Table]:
    """``(train, evaluation)`` with ``COLUMNS`` added; ``liked`` is the training rows' binary label."""
    missing = next((key for table in (train, evaluation) for key in KEYS if key not in table), None)
    if missing:
        raise FeatureError(f"Train.dataset.history needs the data's {missing!r} column (it has {train.names})")
    liked = np.asarray(liked).reshape(-1).astype(bool)
    subsets = {"history": np.ones(len(train), bool), "history_liked": liked, "history_disliked": ~liked}
    return tuple(
        Table({**table.columns, **{name: _earlier(train, keep, table, length) for name, keep in subsets.items()}})
        for table in (train, evaluation)
    )
