"""User histories (``Train.dataset.history``): each row's history is its user's training rows strictly
before its timestamp, latest ``length`` in time order, liked / disliked by their labels; nothing of the
evaluation rows, the row itself or its future ever enters one."""

import json

import numpy as np
import pytest

from paddlectl.rec.ctr.history import add_history
from paddlectl.rec.ctr.sources import _prepare, check_dataset
from paddlectl.rec.errors import ConfigError, FeatureError
from paddlectl.rec.splits import random_split
from paddlectl.rec.table import Table


def ratings(n=400, users=7, seed=0):
    rng = np.random.default_rng(seed)
    return Table(
        {
            "user_id": rng.integers(0, users, n),
            "item_id": rng.permutation(n) + 1000,  # one item per row: an item names its row
            "timestamp": rng.integers(0, 60, n),  # many ties within a user
            "rating": rng.integers(1, 6, n).astype(float),
        }
    )


def brute(train, liked, user, time, length, keep):
    """The latest ``length`` items of ``user``'s kept training rows with timestamp < ``time``, by hand."""
    rows = [
        (train["timestamp"][i], i)
        for i in range(len(train))
        if train["user_id"][i] == user and train["timestamp"][i] < time and keep(liked[i])
    ]
    return tuple(train["item_id"][i] for _, i in sorted(rows)[-length:])


@pytest.mark.parametrize("length", [1, 5, 100])
def test_histories_hold_only_earlier_training_rows_of_the_user(length):
    train, evaluation = random_split(ratings(), (0.75, 0.25), seed=1)
    liked = train["rating"] >= 4
    new_train, new_eval = add_history(train, evaluation, liked, length)
    rules = {"history": lambda _: True, "history_liked": lambda x: x, "history_disliked": lambda x: not x}
    for table in (new_train, new_eval):
        for r in range(len(table)):
            user, time = table["user_id"][r], table["timestamp"][r]
            for column, keep in rules.items():
                assert table[column][r] == brute(train, liked, user, time, length, keep), (column, r)
            assert table["item_id"][r] not in table["history"][r]  # never the row's own item
    held_out = set(evaluation["item_id"].tolist())
    seen = {item for table in (new_train, new_eval) for h in table["history"] for item in h}
    assert seen and not seen & held_out  # nothing of the evaluation rows enters any history
    assert new_train.names == [*train.names, "history", "history_liked", "history_disliked"]


def test_a_rating_at_the_same_second_is_not_history():
    table = Table({"user_id": [1, 1, 1], "item_id": [10, 11, 12], "timestamp": [5, 5, 6], "rating": [5.0, 5.0, 5.0]})
    new, _ = add_history(table, table.take([2]), np.ones(3, bool), 10)
    assert new["history"].tolist() == [(), (), (10, 11)]


def test_history_needs_its_columns_and_a_sane_length():
    table = Table({"user_id": [1], "item_id": [2]})
    with pytest.raises(FeatureError, match="needs the data's 'timestamp' column"):
        add_history(table, table, np.ones(1, bool), 3)
    with pytest.raises(ConfigError, match="history.length is 0"):
        check_dataset({"name": "MovieLens100K", "history": {"length": 0}})
    with pytest.raises(ConfigError, match="lenght"):
        check_dataset({"name": "MovieLens100K", "history": {"lenght": 5}})


def test_prepared_split_builds_histories_from_its_training_half(tmp_path):
    table = ratings(120, users=4, seed=3)
    lines = ["user_id,item_id,timestamp,rating"] + [
        f"{u},{i},{t},{r:g}"
        for u, i, t, r in zip(table["user_id"], table["item_id"], table["timestamp"], table["rating"], strict=True)
    ]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    dataset = {"name": "Rows", "path": str(tmp_path / "r.csv"), "split": {"name": "leave_last_out", "n": 2},
               "history": {"length": 8}}  # fmt: skip
    features = {
        "sparse": ["user_id", {"name": "history_liked", "max_len": 8}],
        "label": {"name": "rating", "threshold": 4},
    }
    data = _prepare(json.dumps(dataset, sort_keys=True), json.dumps(features, sort_keys=True))
    held_out = {str(i) for i in data.eval["item_id"]}
    for r in range(len(data.eval)):
        assert not {str(i) for i in data.eval["history"][r]} & held_out
        earlier = data.train["timestamp"].astype(int)[data.train["user_id"] == data.eval["user_id"][r]]
        assert len(data.eval["history"][r]) == min(8, int((earlier < int(data.eval["timestamp"][r])).sum()))
    x, _ = data.encoder.encode(data.eval)
    assert x.shape == (len(data.eval), 1 + 8)
