import json

import numpy as np
import pytest

from paddlectl.rec.ann import (
    MANIFEST_FILE,
    VECTORS_FILE,
    HnswParams,
    ItemIndex,
    exact_top_k,
    index_recall,
    load_item_index,
    save_item_index,
)
from paddlectl.rec.errors import DataError

pytest.importorskip("hnswlib", reason="the ANN index is hnswlib's")


@pytest.fixture(scope="module")
def vectors():
    rng = np.random.default_rng(1)
    items = rng.normal(size=(2000, 32)).astype(np.float32)
    queries = rng.normal(size=(50, 32)).astype(np.float32)
    return items, queries


def test_exact_top_k_is_the_best_inner_products_without_excluded_items(vectors):
    items, queries = vectors
    exclude = np.zeros((len(queries), len(items)), bool)
    exclude[:, :100] = True
    indices, scores = exact_top_k(queries, items, 5, exclude)
    full = queries @ items.T
    full[:, :100] = -np.inf
    np.testing.assert_array_equal(indices, np.argsort(-full, axis=1)[:, :5])
    np.testing.assert_allclose(scores, np.sort(full, axis=1)[:, ::-1][:, :5], rtol=1e-5)


def test_hnsw_recall_on_random_vectors_is_at_least_0_9(vectors):
    items, queries = vectors
    exclude = np.zeros((len(queries), len(items)), bool)
    exclude[np.arange(len(queries)), np.arange(len(queries))] = True
    exact, exact_scores = exact_top_k(queries, items, 10, exclude)
    approximate, scores = ItemIndex(items, HnswParams(M=16, ef=64)).query(queries, 10, exclude)
    assert index_recall(approximate, exact) >= 0.9
    assert not np.isin(np.arange(len(queries)), approximate[np.arange(len(queries)), :]).all()
    hits = approximate == exact
    np.testing.assert_allclose(scores[hits], exact_scores[hits], rtol=1e-4)


def test_index_recall_counts_the_shared_items():
    assert index_recall(np.array([[1, 2, 3]]), np.array([[3, 4, 1]])) == pytest.approx(2 / 3)


def test_saved_index_round_trips_and_rebuilds_the_same_graph(tmp_path, vectors):
    items, queries = vectors
    params = HnswParams(M=8, ef=32, seed=3)
    save_item_index(tmp_path, items, params)
    loaded = load_item_index(tmp_path)
    np.testing.assert_array_equal(loaded.vectors, items)
    assert loaded.params == params
    np.testing.assert_array_equal(loaded.query(queries, 10)[0], ItemIndex(items, params).query(queries, 10)[0])


def _tamper_manifest(path, **changes):
    manifest = json.loads((path / MANIFEST_FILE).read_text())
    manifest.update(changes)
    (path / MANIFEST_FILE).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: (p / MANIFEST_FILE).unlink(), "is missing"),
        (lambda p: (p / MANIFEST_FILE).write_bytes(b"\x80\x81 not json"), "not a paddlectl item index"),
        (lambda p: (p / MANIFEST_FILE).write_text("x" * 70_000), "more than"),
        (lambda p: _tamper_manifest(p, format="pickle"), "format is not"),
        (lambda p: _tamper_manifest(p, version=9), "has version 9"),
        (lambda p: _tamper_manifest(p, count=10**12), "count is"),
        (lambda p: _tamper_manifest(p, dim=-1), "dim is"),
        (lambda p: _tamper_manifest(p, hnsw={"M": 10**9}), "HNSW parameter M"),
        (lambda p: _tamper_manifest(p, hnsw={"evil": 1}), "unknown HNSW parameter"),
        (lambda p: _tamper_manifest(p, count=3), "holds .* bytes"),
        (lambda p: (p / VECTORS_FILE).write_bytes((p / VECTORS_FILE).read_bytes()[:-4] + b"\0\0\0\0"), "sha256"),
        (lambda p: (p / VECTORS_FILE).unlink(), "is missing"),
    ],
)
def test_hostile_index_files_are_refused_with_a_data_error(tmp_path, damage, message):
    save_item_index(tmp_path, np.ones((400, 16), np.float32), HnswParams())
    damage(tmp_path)
    with pytest.raises(DataError, match=message):
        load_item_index(tmp_path)


def test_a_forged_safetensors_file_with_a_matching_checksum_is_still_checked(tmp_path):
    from safetensors.numpy import save_file

    save_item_index(tmp_path, np.ones((40, 4), np.float32), HnswParams())
    save_file({"vectors": np.full((40, 4), np.nan, np.float32)}, str(tmp_path / VECTORS_FILE))
    import hashlib

    _tamper_manifest(tmp_path, sha256=hashlib.sha256((tmp_path / VECTORS_FILE).read_bytes()).hexdigest())
    with pytest.raises(DataError, match="finite"):
        load_item_index(tmp_path)
    save_file({"vectors": np.ones((40, 4), np.float64)[:, :2]}, str(tmp_path / VECTORS_FILE))
    _tamper_manifest(tmp_path, sha256=hashlib.sha256((tmp_path / VECTORS_FILE).read_bytes()).hexdigest())
    with pytest.raises(DataError, match="float32"):
        load_item_index(tmp_path)
