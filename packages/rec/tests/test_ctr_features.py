"""The feature encoder: vocabularies with a counted cold-start row, dense statistics, hostile rows."""

import json

import numpy as np
import pytest

from paddlectl.rec.ctr.features import FeatureEncoder, parse_features
from paddlectl.rec.ctr.rows import read_rows, rows_table
from paddlectl.rec.errors import ConfigError, DataError, FeatureError
from paddlectl.rec.table import Table

SPEC = {
    "sparse": ["user", {"name": "slot", "num_embeddings": 5}],
    "dense": ["age"],
    "label": {"name": "rating", "threshold": 4},
}
TRAIN = Table(
    {
        "user": np.array(["a", "b", "a", "c"]),
        "slot": np.array([0, 4, 2, 1]),
        "age": np.array([20.0, 30.0, 40.0, 50.0]),
        "rating": np.array([5.0, 3.0, 4.0, 1.0]),
    }
)


@pytest.fixture
def encoder():
    return FeatureEncoder.fit(parse_features(SPEC), TRAIN)


def test_encoding_maps_ids_counts_unseen_and_standardises(encoder):
    assert encoder.field_sizes == [4, 5]  # three users + the cold-start row; the slot's own size
    rows = rows_table(
        [{"user": "b", "slot": "3", "age": "35"}, {"user": "zz", "slot": 0, "age": 35}], ["user", "slot", "age"]
    )
    x, unseen = encoder.encode(rows)
    assert x.dtype == np.float32 and x.shape == (2, 3)
    assert x[0, 0] == 2 and x[1, 0] == 0 and unseen == {"user": 1}  # 'zz' -> row 0, counted
    assert x[:, 1].tolist() == [3, 0]
    assert x[0, 2] == pytest.approx((35 - 35) / np.std([20, 30, 40, 50]))
    assert encoder.labels(TRAIN).ravel().tolist() == [1, 0, 1, 0]


def test_stored_encoder_round_trips_through_json(encoder):
    again = FeatureEncoder.from_dict(json.loads(json.dumps(encoder.to_dict())))
    assert np.array_equal(again.encode(TRAIN)[0], encoder.encode(TRAIN)[0])


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("slot", 5, r"index 5 \(row 1\) is out of range \[0, 5\)"),
        ("slot", -1, "out of range"),
        ("slot", 1.5, "out of range"),
        ("age", float("nan"), "'age' has 1 NaN"),
        ("age", "old", "'age' holds a value that is not a number"),
    ],
)
def test_hostile_values_are_refused_with_the_column(encoder, column, value, message):
    row = {"user": "a", "slot": 1, "age": 30, column: value}
    with pytest.raises(FeatureError, match=message):
        encoder.encode(rows_table([row], ["user", "slot", "age"]))


def test_a_missing_feature_column_is_named(encoder):
    with pytest.raises(FeatureError, match="row 2 has no value for feature column 'age'"):
        rows_table([{"user": "a", "slot": 1, "age": 3}, {"user": "a", "slot": 1}], ["user", "slot", "age"])
    with pytest.raises(FeatureError, match="no column 'slot'"):
        encoder.encode(Table({"user": np.array(["a"]), "age": np.array([1.0])}))


def test_nan_label_and_non_binary_label_are_refused():
    spec = parse_features({**SPEC, "label": {"name": "rating"}})
    with pytest.raises(FeatureError, match="must hold 0/1"):
        FeatureEncoder.fit(spec, TRAIN).labels(TRAIN)
    nan = Table({**TRAIN.columns, "rating": np.array([1.0, np.nan, 0.0, 1.0])})
    with pytest.raises(FeatureError, match="'rating' has 1 NaN"):
        FeatureEncoder.fit(parse_features(SPEC), TRAIN).labels(nan)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({**SPEC, "sparse": []}, "non-empty list"),
        ({**SPEC, "dense": [1]}, "must list column names"),
        ({**SPEC, "sparse": [{"name": "s", "num_embeddings": 0}]}, "num_embeddings"),
        ({**SPEC, "sparse": [{"name": "s", "num_embedings": 3}]}, "num_embeddings"),
        ({**SPEC, "dense": ["user"]}, "'user' twice"),
        ({**SPEC, "label": {"threshold": 4}}, "needs name"),
        ({**SPEC, "extra": 1}, "unknown"),
    ],
)
def test_bad_feature_lists_are_config_errors(section, message):
    with pytest.raises(ConfigError, match=message):
        parse_features(section)


def test_malformed_stored_encoder_is_refused(encoder):
    stored = encoder.to_dict()
    for broken in ({**stored, "vocabs": {}}, {**stored, "mean": "x"}, {k: v for k, v in stored.items() if k != "std"}):
        with pytest.raises(FeatureError, match="re-export"):
            FeatureEncoder.from_dict(broken)


def test_rows_files(tmp_path):
    (tmp_path / "r.csv").write_text("user,age\na,3\nb,4\n")
    (tmp_path / "r.jsonl").write_text('{"user": "a", "age": 3}\n\n{"user": "b", "age": 4}\n')
    (tmp_path / "r.json").write_text('{"user": "a", "age": 3}')
    assert [r["user"] for r in read_rows(tmp_path / "r.csv")] == ["a", "b"]
    assert [r["age"] for r in read_rows(tmp_path / "r.jsonl")] == [3, 4]
    assert read_rows(tmp_path / "r.json") == [{"user": "a", "age": 3}]
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "r.txt").write_text("a")
    for name, message in (
        ("bad.jsonl", "not valid JSONL"),
        ("list.json", "no feature rows"),
        ("r.txt", "must be a .csv"),
    ):
        with pytest.raises(DataError, match=message):
            read_rows(tmp_path / name)


MULTI_SPEC = {
    "sparse": ["user", {"name": "genres", "max_len": 3}, {"name": "history", "max_len": 2, "pooling": "sum"}],
    "dense": [],
    "label": {"name": "rating", "threshold": 4},
}
MULTI_TRAIN = Table(
    {
        "user": np.array(["a", "b"]),
        "genres": np.array([("Drama", "War"), ("Comedy",)], dtype=object),
        "history": np.array([(7, 8, 9), ()], dtype=object),
        "rating": np.array([5.0, 3.0]),
    }
)


def test_multi_valued_features_fill_slots_pad_and_count_unseen_values():
    encoder = FeatureEncoder.fit(parse_features(MULTI_SPEC), MULTI_TRAIN)
    assert encoder.field_sizes == [3, 4, 4] and encoder.spec.field_lengths == [1, 3, 2]
    assert encoder.spec.pooling == [None, "mean", "sum"] and encoder.spec.width == 6
    rows = [
        {"user": "a", "genres": ["War", "Drama", "Comedy", "War"], "history": [9, 8]},  # 4 genres: the last 3
        {"user": "b", "genres": "Comedy|Noir", "history": ""},  # a CSV cell: '|'-separated, empty = no values
        {"user": "b", "genres": [], "history": [7, 12345]},  # 12345 never seen: the OOV row 0, counted
    ]
    x, unseen = encoder.encode(rows_table(rows, ["user", "genres", "history"], ["genres", "history"]))
    # genres vocabulary: Comedy 1, Drama 2, War 3; history: 7 -> 1, 8 -> 2, 9 -> 3 (a's whole history)
    assert x.tolist() == [[1, 2, 1, 3, 3, 2], [2, 1, 0, -1, -1, -1], [2, -1, -1, -1, 1, 0]]
    assert unseen == {"genres": 1, "history": 1}  # 'Noir' and 12345: values, not rows
    again = FeatureEncoder.from_dict(json.loads(json.dumps(encoder.to_dict())))
    assert np.array_equal(again.encode(MULTI_TRAIN)[0], encoder.encode(MULTI_TRAIN)[0])
    assert again.spec.pooling == encoder.spec.pooling


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"name": "g", "max_len": 0}, "max_len: an int in [1, 1024]"),
        ({"name": "g", "max_len": True}, "max_len: an int in [1, 1024]"),
        ({"name": "g", "pooling": "mean"}, "with max_len"),
        ({"name": "g", "max_len": 3, "pooling": "max"}, "give mean or sum"),
        ({"name": "g", "maxlen": 3}, "maxlen"),
    ],
)
def test_multi_valued_feature_typos_are_config_errors(item, message):
    with pytest.raises(ConfigError, match=__import__("re").escape(message)):
        parse_features({**MULTI_SPEC, "sparse": [item]})


def test_an_empty_list_cell_is_allowed_only_for_multi_valued_columns():
    rows_table([{"user": "a", "history": ""}], ["user", "history"], ["history"])
    with pytest.raises(FeatureError, match="row 1 has no value for feature column 'user'"):
        rows_table([{"user": "", "history": []}], ["user", "history"], ["history"])
