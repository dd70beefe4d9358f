"""MiniLM-L6-v2 sentence embeddings: sbert.net's published search scores, batch independence,
truncation; the sentence-transformers directory settings and their refusals."""

from __future__ import annotations

import json

import _hf_bert
import numpy as np
import pytest

from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.nlp.embed import Embedder, SentenceConfig, cosine_matrix

CORPUS = [
    "A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
    "A man is riding a horse.", "A woman is playing violin.", "Two men pushed carts through the woods.",
    "A man is riding a white horse on an enclosed ground.", "A monkey is playing drums.",
    "A cheetah is running behind its prey.",
]  # fmt: skip
# sbert.net's semantic-search example with all-MiniLM-L6-v2: each query's top 3 (corpus index, score)
PUBLISHED = {
    "A man is eating pasta.": [(0, 0.7035), (1, 0.5272), (3, 0.1889)],
    "Someone in a gorilla costume is playing a set of drums.": [(7, 0.6433), (4, 0.2564), (3, 0.1389)],
    "A cheetah chases prey on across a field.": [(8, 0.8253), (0, 0.1399), (7, 0.1292)],
}


@pytest.fixture(scope="module")
def minilm(minilm_dir):
    return Embedder.from_pretrained(minilm_dir)


def test_published_search_scores_reproduce(minilm):
    corpus = minilm.encode(CORPUS)
    queries = minilm.encode(list(PUBLISHED))
    scores = cosine_matrix(queries, corpus)
    for row, expected in zip(scores, PUBLISHED.values(), strict=True):
        top = np.argsort(-row)[:3]
        assert [int(i) for i in top] == [i for i, _ in expected]
        np.testing.assert_allclose(row[top], [s for _, s in expected], atol=1e-4)


def test_embeddings_are_unit_rows_independent_of_batch_mates(minilm):
    alone = minilm.encode([CORPUS[0]])
    together = minilm.encode([CORPUS[0], CORPUS[6]], batch_size=2)
    assert together.shape == (2, 384) and together.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(together[0], alone[0], atol=1e-5)


def test_long_texts_are_cut_at_max_seq_length_or_refused(minilm, tmp_path):
    long_text = "word " * 300
    assert minilm.config.max_seq_length == 256 and minilm.token_counts([long_text]) == [302]
    with pytest.raises(DataError, match="text 0 is 302 tokens, longer than the limit of 256 positions"):
        minilm.encode([long_text], truncation=False)
    _hf_bert.write(tmp_path)  # the cut itself on a small model: 8 tokens kept of 12
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8}))
    small = Embedder.from_pretrained(tmp_path)
    np.testing.assert_allclose(small.encode(["a b c d e f g h i j"]), small.encode(["a b c d e f"]), atol=1e-6)


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([], "non-empty list"),
        ("one string", "non-empty list"),
        (["ok", "  "], "text 1 is empty"),
        (["ok", 3], "text 1 is a int"),
    ],
)
def test_bad_texts_are_data_errors(minilm, texts, message):
    with pytest.raises(DataError, match=message):
        minilm.encode(texts)


def test_a_plain_bert_directory_gets_mean_pooling_normalised_at_its_positions(tmp_path):
    _hf_bert.write(tmp_path)
    assert SentenceConfig.read(tmp_path, 24) == SentenceConfig(24, "mean", True)
    vectors = Embedder.from_pretrained(tmp_path).encode(["the cat sat", "dogs"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


def test_sentence_transformers_settings_are_read(tmp_path):
    _hf_bert.write(tmp_path)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    (tmp_path / "modules.json").write_text(json.dumps([{"type": "sentence_transformers.models.Transformer"}]))
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8}))
    embedder = Embedder.from_pretrained(tmp_path)
    assert embedder.config == SentenceConfig(8, "cls", False)
    vector = embedder.encode(["the cat sat on the mat"])
    model_out = embedder.model(
        *(embedder.tokenizer("the cat sat on the mat", return_tensors="pd")[k] for k in ("input_ids",))
    )
    np.testing.assert_allclose(vector[0], model_out[0].numpy()[0, 0], atol=1e-5)  # [CLS], not normalised


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("sentence_bert_config.json", {"max_seq_length": 99}, r"max_seq_length 99 must be an int in \[2, 24\]"),
        ("1_Pooling/config.json", {"pooling_mode_max_tokens": True}, r"pooling \['max_tokens'\] is not supported"),
        ("modules.json", {"not": "a list"}, "expected a JSON list, got dict"),
    ],
)
def test_unsupported_sentence_settings_are_refused(tmp_path, name, content, message):
    _hf_bert.write(tmp_path)
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text(json.dumps(content))
    with pytest.raises(CheckpointError, match=message):
        Embedder.from_pretrained(tmp_path)
