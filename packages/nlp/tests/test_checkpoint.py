"""The Hugging Face safetensors loader on a tiny random BERT written in the test: values against a
NumPy BERT, the name map, and one-line errors naming keys, mapping and sizes."""

from __future__ import annotations

import json

import _hf_bert
import numpy as np
import pytest
import safetensors.numpy

import paddlectl.framework as paddle
from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.nlp.checkpoint import MAPPING_NAME, hf_name_map, load_pretrained
from paddlectl.nlp.encoder import BertConfig

TEXTS = ["the cat sat on the mat.", "dogs!"]


def _run(model, tokenizer, texts=TEXTS):
    batch = tokenizer(texts, padding=True, return_tensors="np")
    feeds = [paddle.to_tensor(batch[k]) for k in ("input_ids", "token_type_ids", "attention_mask")]
    _, pooled, states = model(*feeds, output_hidden_states=True)
    return batch, [s.numpy() for s in states], pooled.numpy()


@pytest.mark.parametrize("prefix", ["", "bert."])
def test_loaded_model_matches_a_numpy_bert_on_every_layer(tmp_path, prefix):
    weights = _hf_bert.write(tmp_path, prefix=prefix)
    model, tokenizer = load_pretrained(tmp_path)
    batch, states, pooled = _run(model, tokenizer)
    ref_states, ref_pooled = _hf_bert.forward(weights, batch["input_ids"], batch["attention_mask"].astype(bool))
    keep = batch["attention_mask"].astype(bool)
    assert len(states) == len(ref_states) == 3
    for ours, ref in zip(states, ref_states, strict=True):
        np.testing.assert_allclose(ours[keep], ref[keep], atol=2e-5)
    np.testing.assert_allclose(pooled, ref_pooled, atol=2e-5)


def test_linear_weights_are_transposed_and_tables_are_not(tmp_path):
    weights = _hf_bert.write(tmp_path)
    model, _ = load_pretrained(tmp_path)
    q = model.encoder.layers[1].self_attn.q_proj.weight.numpy()
    np.testing.assert_array_equal(q, weights["encoder.layer.1.attention.self.query.weight"].T)
    table = model.embeddings.word_embeddings.weight.numpy()
    np.testing.assert_array_equal(table, weights["embeddings.word_embeddings.weight"])
    mapping = hf_name_map(BertConfig.from_json(tmp_path / "config.json"))
    assert set(mapping) == set(weights)  # every file weight has exactly one target
    assert {t.name for t in mapping.values()} == set(model.state_dict())


def test_tf_era_gamma_beta_names_and_the_position_ids_buffer_load(tmp_path):
    weights = _hf_bert.write(tmp_path)
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
               for k, v in weights.items()}  # fmt: skip
    renamed["embeddings.position_ids"] = np.arange(24, dtype=np.int64)[None]
    safetensors.numpy.save_file(renamed, str(tmp_path / "model.safetensors"))
    model, _ = load_pretrained(tmp_path)
    np.testing.assert_array_equal(
        model.encoder.layers[0].norm2.bias.numpy(), weights["encoder.layer.0.output.LayerNorm.bias"]
    )


def _rewrite(path, edit):
    tensors = safetensors.numpy.load_file(str(path))
    edit(tensors)
    safetensors.numpy.save_file(tensors, str(path))


def test_missing_and_unexpected_keys_are_named_with_the_mapping_tried(tmp_path):
    _hf_bert.write(tmp_path)

    def edit(t):
        del t["encoder.layer.1.output.dense.weight"]
        t["cls.predictions.bias"] = np.zeros(3, np.float32)

    _rewrite(tmp_path / "model.safetensors", edit)
    with pytest.raises(CheckpointError) as info:
        load_pretrained(tmp_path)
    message = str(info.value)
    assert "missing [encoder.layer.1.output.dense.weight]" in message
    assert "unexpected [cls.predictions.bias]" in message
    assert MAPPING_NAME in message and "\n" not in message


def test_a_checkpoint_with_fewer_layers_than_its_config_is_refused(tmp_path):
    _hf_bert.write(tmp_path, num_hidden_layers=1)
    (tmp_path / "config.json").write_text(json.dumps({**_hf_bert.CONFIG, "vocab_size": len(_hf_bert.VOCAB)}))
    with pytest.raises(CheckpointError, match=r"2-layer BERT .* missing \[encoder\.layer\.1\."):
        load_pretrained(tmp_path)


def test_a_tokenizer_of_another_vocabulary_is_refused(tmp_path):
    _hf_bert.write(tmp_path)
    (tmp_path / "vocab.txt").write_text("\n".join([*_hf_bert.VOCAB, "extra"]) + "\n")
    with pytest.raises(
        CheckpointError,
        match=f"tokenizer has {len(_hf_bert.VOCAB) + 1} tokens but the word embeddings have {len(_hf_bert.VOCAB)} rows",
    ):
        load_pretrained(tmp_path)


def test_a_config_vocab_size_that_the_embeddings_do_not_have_is_refused(tmp_path):
    _hf_bert.write(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "vocab_size": 99}))
    with pytest.raises(CheckpointError, match="vocab_size 99 but the word embeddings have"):
        load_pretrained(tmp_path)


def test_a_weight_of_the_wrong_shape_names_its_key(tmp_path):
    _hf_bert.write(tmp_path)

    def edit(t):
        t["encoder.layer.0.intermediate.dense.weight"] = np.zeros((8, 16), np.float32)

    _rewrite(tmp_path / "model.safetensors", edit)
    with pytest.raises(CheckpointError, match="encoder.layers.0.linear1.weight"):
        load_pretrained(tmp_path)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json"), "not a readable safetensors"),
        (lambda root: (root / "model.safetensors").unlink(), "no such file"),
        (lambda root: (root / "config.json").write_text("{"), "not readable JSON"),
        (lambda root: (root / "config.json").write_text(json.dumps({"model_type": "gpt2"})), "model_type 'gpt2'"),
        (lambda root: (root / "config.json").write_text(json.dumps({**_hf_bert.CONFIG, "vocab_size": 5, "position_embedding_type": "relative_key"})), "position_embedding_type"),
        (lambda root: (root / "config.json").write_text(json.dumps({**_hf_bert.CONFIG, "vocab_size": 5, "num_attention_heads": 3})), "not divisible"),
        (lambda root: (root / "vocab.txt").unlink(), "neither tokenizer.json nor vocab.txt"),
        (lambda root: (root / "config.json").write_text("[1, 2]"), "expected a JSON dict, got list"),
        (lambda root: (root / "config.json").write_text(json.dumps({**_hf_bert.CONFIG, "vocab_size": "x"})), "vocab_size must be a positive int"),
        (lambda root: (root / "model.safetensors").write_bytes((root / "model.safetensors").read_bytes()[:5000]), "not a readable safetensors"),
        (lambda root: (root / "model.safetensors").write_bytes(b"\xff" * 8 + b"{}"), "not a readable safetensors"),
        (lambda root: (root / "vocab.txt").write_bytes(b"\xff\xfe\x00abc\n"), "not a WordPiece vocabulary"),
        (lambda root: (root / "tokenizer_config.json").write_text(json.dumps({"pad_token": {"content": 5}})), "pad_token must be a string"),
        (lambda root: (root / "tokenizer_config.json").write_text(json.dumps({"model_max_length": "big"})), "limit 'big' must be an int"),
    ],
)  # fmt: skip
def test_damaged_checkpoints_raise_one_line_checkpoint_errors(tmp_path, damage, message):
    _hf_bert.write(tmp_path)
    damage(tmp_path)
    with pytest.raises(CheckpointError, match=message) as info:
        load_pretrained(tmp_path)
    assert "\n" not in str(info.value)


def test_an_integer_weight_is_refused(tmp_path):
    _hf_bert.write(tmp_path)
    _rewrite(tmp_path / "model.safetensors", lambda t: t.update({"pooler.dense.bias": np.zeros(16, np.int32)}))
    with pytest.raises(CheckpointError, match="'pooler.dense.bias' is int32"):
        load_pretrained(tmp_path)


def test_not_a_directory_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not a directory"):
        load_pretrained(tmp_path / "nowhere")
