"""The tokenizer call against Hugging Face `tokenizers` used directly, on fixed English and Chinese
samples (MiniLM's tokenizer.json and vocab.txt, a BPE trained here), and its refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

import paddlectl.framework as paddle
from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.nlp.tokenizer import AutoTokenizer, Tokenizer, segment_words

SAMPLES = [
    "Hello, world! This is paddlectl.",
    "Tokenizers split unaffable words into WordPieces: electroencephalography.",
    "我爱北京天安门，天安门上太阳升。",
    "混合 text 和中文 mixed with numbers 3.14159 and émojis 🙂",
    "   leading and trailing spaces   ",
]


def _reference(path) -> tokenizers.Tokenizer:
    backend = tokenizers.Tokenizer.from_file(str(path))
    backend.no_truncation()
    backend.no_padding()
    return backend


def test_single_and_batch_calls_equal_tokenizers_on_fixed_samples(minilm_dir):
    ours = AutoTokenizer.from_pretrained(minilm_dir)
    reference = _reference(minilm_dir / "tokenizer.json").encode_batch(SAMPLES)
    batch = ours(SAMPLES, return_offsets_mapping=True)
    assert batch["input_ids"] == [e.ids for e in reference]
    assert batch["token_type_ids"] == [e.type_ids for e in reference]
    assert batch["attention_mask"] == [e.attention_mask for e in reference]
    assert batch["offset_mapping"] == [[tuple(o) for o in e.offsets] for e in reference]
    assert ours(SAMPLES[2])["input_ids"] == reference[2].ids  # a str gives one row, not a batch
    assert ours.tokenize(SAMPLES[2]) == reference[2].tokens[1:-1]


def test_vocab_txt_alone_gives_the_same_ids_as_tokenizers_bert_wordpiece(tmp_path, minilm_dir):
    (tmp_path / "vocab.txt").write_bytes((minilm_dir / "vocab.txt").read_bytes())
    ours = AutoTokenizer.from_pretrained(tmp_path)
    reference = tokenizers.BertWordPieceTokenizer(str(tmp_path / "vocab.txt"), lowercase=True)
    pairs = list(zip(SAMPLES, SAMPLES[::-1], strict=True))
    expected = reference.encode_batch(pairs)
    got = ours(SAMPLES, SAMPLES[::-1])
    assert got["input_ids"] == [e.ids for e in expected]
    assert got["token_type_ids"] == [e.type_ids for e in expected]
    assert got["input_ids"][0] == AutoTokenizer.from_pretrained(minilm_dir)(SAMPLES[0], SAMPLES[-1])["input_ids"]


def test_cased_vocab_keeps_case_when_the_config_says_so(tmp_path, minilm_dir):
    (tmp_path / "vocab.txt").write_bytes((minilm_dir / "vocab.txt").read_bytes())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    assert AutoTokenizer.from_pretrained(tmp_path).tokenize("Hello") != ["hello"]


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory):
    """A byte-level BPE trained here on fixed text, saved as tokenizer.json with a pad token."""
    backend = tokenizers.Tokenizer(models.BPE(unk_token=None))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(SAMPLES * 20, trainer)
    root = tmp_path_factory.mktemp("bpe")
    backend.save(str(root / "tokenizer.json"))
    (root / "tokenizer_config.json").write_text(json.dumps({"pad_token": "<pad>", "model_max_length": 64}))
    return root


def test_bpe_from_tokenizer_json_equals_tokenizers_and_pads_with_its_pad_token(bpe_dir):
    ours = AutoTokenizer.from_pretrained(bpe_dir)
    reference = _reference(bpe_dir / "tokenizer.json").encode_batch(SAMPLES)
    got = ours(SAMPLES, padding=True, return_tensors="np", return_offsets_mapping=True)
    width = max(len(e.ids) for e in reference)
    pad = ours.backend.token_to_id("<pad>")
    for row, e in enumerate(reference):
        n = len(e.ids)
        assert got["input_ids"][row, :n].tolist() == e.ids and (got["input_ids"][row, n:] == pad).all()
        assert got["attention_mask"][row].tolist() == [1] * n + [0] * (width - n)
    assert ours.model_max_length == 64 and ours.decode(reference[3].ids) == SAMPLES[3]


def test_padding_truncation_and_tensors(minilm_dir):
    ours = AutoTokenizer.from_pretrained(minilm_dir)
    out = ours(SAMPLES, padding="max_length", truncation=True, max_length=12, return_tensors="pd")
    assert isinstance(out["input_ids"], paddle.Tensor) and out["input_ids"].shape == [5, 12]
    ids = out["input_ids"].numpy()
    assert (ids[:, 0] == 101).all() and ids[1, -1] == 102  # [CLS] first; a cut text still ends with [SEP]
    pair = ours("a b c d e f g h", "i j k", truncation=True, max_length=8)
    assert len(pair["input_ids"]) == 8 and pair["token_type_ids"].count(1) >= 2  # the longer side lost tokens
    np.testing.assert_array_equal(ours(SAMPLES[0], return_tensors="np")["input_ids"], [ours(SAMPLES[0])["input_ids"]])


def test_too_long_without_truncation_names_the_text_and_lengths(minilm_dir):
    ours = AutoTokenizer.from_pretrained(minilm_dir)
    with pytest.raises(
        DataError, match=r"text 1 is 602 tokens, longer than the limit of 512 positions; pass truncation=True"
    ):
        ours(["short", "word " * 600])
    with pytest.raises(DataError, match="limit of 10 positions"):
        ours("one two three four five six seven eight nine ten", max_length=10)
    assert len(ours("word " * 600, truncation=True)["input_ids"]) == 512
    with pytest.raises(DataError, match="max_length 2 leaves no room for text 0 beside its special tokens"):
        ours("hello world there", "and more", truncation=True, max_length=2)  # tokenizers would not cut it


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: t(3), "must be a str or a list of str"),
        (lambda t: t(["ok", None]), "must be a str or a list of str"),
        (lambda t: t(["a", "b"], ["c"]), "text_pair must match"),
        (lambda t: t("a", padding="both"), "padding must be one of"),
        (lambda t: t("a", return_tensors="pt"), "return_tensors must be"),
        (lambda t: t(["a", "b c d"], return_tensors="np"), "pass padding=True"),
        (lambda t: t("a", max_length=0), "max_length must be a positive int"),
        (lambda t: t("a", max_length=513), "exceeds the model's 512 positions"),
    ],
)
def test_bad_calls_raise_data_errors(minilm_dir, call, message):
    with pytest.raises(DataError, match=message):
        call(AutoTokenizer.from_pretrained(minilm_dir))


def test_padding_without_a_pad_token_is_refused(bpe_dir):
    backend = tokenizers.Tokenizer.from_file(str(bpe_dir / "tokenizer.json"))
    ours = Tokenizer(backend, model_max_length=64, pad_token=None)
    with pytest.raises(DataError, match="has no pad token"):
        ours(["a", "bb"], padding=True)


def test_unusable_directories_raise_checkpoint_errors(tmp_path):
    with pytest.raises(DataError, match="is not a directory"):
        AutoTokenizer.from_pretrained(tmp_path / "missing")
    with pytest.raises(CheckpointError, match="neither tokenizer.json nor vocab.txt"):
        AutoTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": 3}')
    with pytest.raises(CheckpointError, match="not a tokenizers file"):
        AutoTokenizer.from_pretrained(tmp_path)
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(CheckpointError, match=r"lacks the special tokens \['\[CLS\]', '\[SEP\]', '\[UNK\]'\]"):
        AutoTokenizer.from_pretrained(tmp_path)


def test_jieba_segments_chinese_into_words():
    assert segment_words("我爱北京天安门") == ["我", "爱", "北京", "天安门"]
    with pytest.raises(DataError):
        segment_words(None)


@pytest.fixture(scope="module")
def minilm_tokenizer(minilm_dir):
    return AutoTokenizer.from_pretrained(minilm_dir)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=80), min_size=1, max_size=4), max_length=st.integers(3, 40), pairs=st.booleans())
def test_any_unicode_text_gives_valid_ids_offsets_and_masks(minilm_tokenizer, texts, max_length, pairs):
    tokenizer = minilm_tokenizer
    second = texts[::-1] if pairs else None
    out = tokenizer(
        texts, second, padding="max_length", truncation=True, max_length=max_length, return_offsets_mapping=True
    )
    rows = zip(
        texts, second or [""] * len(texts), out["input_ids"], out["attention_mask"], out["offset_mapping"], strict=True
    )
    for text, other, ids, mask, offsets in rows:
        assert len(ids) == len(mask) == len(offsets) == max_length
        assert all(0 <= i < tokenizer.vocab_size for i in ids)
        assert all(0 <= a <= b <= max(len(text), len(other)) for a, b in offsets)  # each side's own characters
        assert mask == sorted(mask, reverse=True) and mask[0] == 1  # [CLS] first, padding only at the end
