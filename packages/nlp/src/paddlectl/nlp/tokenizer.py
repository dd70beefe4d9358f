"""Tokenizers of Hugging Face checkpoints, called the way PaddleNLP's ``AutoTokenizer`` is.

The splitting itself is Hugging Face ``tokenizers`` (Rust): a ``tokenizer.json`` (WordPiece, BPE,
Unigram, whatever it holds) or, for older BERT checkpoints, a ``vocab.txt`` WordPiece with BERT's
normaliser. This module adds the call (``input_ids``, ``token_type_ids``, ``attention_mask``,
padding, truncation, pairs, offsets, tensors) and refuses what would silently go wrong: a text
longer than the model's positions when truncation is off, a padding request without a pad token.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import tokenizers
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

from paddlectl.framework.errors import CheckpointError, DataError

from .jsonfile import read_json

__all__ = ["AutoTokenizer", "Tokenizer", "segment_words"]

_PADDING = {False: None, "do_not_pad": None, True: "longest", "longest": "longest", "max_length": "max_length"}
_TENSORS = (None, "np", "pd")
_UNSET_MAX = 1_000_000  # tokenizer_config.json's "no limit" is 1e30; above this the model's config decides


class Tokenizer:
    """A ``tokenizers.Tokenizer`` with PaddleNLP's call; ``model_max_length`` is the model's positions."""

    def __init__(
        self,
        backend: tokenizers.Tokenizer,
        model_max_length: int = 512,
        pad_token: str | None = "[PAD]",
        name: str = "",
    ) -> None:
        if not isinstance(backend, tokenizers.Tokenizer):
            raise DataError(f"Tokenizer: backend must be a tokenizers.Tokenizer, got {type(backend).__name__}")
        if not isinstance(model_max_length, int) or model_max_length < 2:
            raise DataError(f"Tokenizer: model_max_length must be an int >= 2, got {model_max_length!r}")
        self.backend, self.model_max_length, self.name = backend, model_max_length, name
        self.pad_token = pad_token if pad_token is not None and backend.token_to_id(pad_token) is not None else None
        backend.no_truncation()
        backend.no_padding()

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @property
    def pad_token_id(self) -> int | None:
        return None if self.pad_token is None else self.backend.token_to_id(self.pad_token)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` without special tokens."""
        return self.backend.encode(_checked_text(text, "text"), add_special_tokens=False).tokens

    def convert_ids_to_tokens(self, ids) -> list[str]:
        return [self.backend.id_to_token(int(i)) for i in ids]

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return self.backend.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    def __call__(
        self,
        text,
        text_pair=None,
        *,
        padding=False,
        truncation: bool = False,
        max_length: int | None = None,
        return_offsets_mapping: bool = False,
        return_tensors: str | None = None,
        add_special_tokens: bool = True,
    ) -> dict:
        """Encode one text (lists out) or a list of texts (lists of lists out), with optional pairs.

        ``padding``: False, True/"longest" or "max_length"; ``truncation`` cuts to ``max_length``
        (default the model's positions), longest sequence of a pair first. With truncation off a
        sequence longer than that limit is a DataError naming the text and both lengths.
        """
        single = isinstance(text, str)
        texts = _checked_batch(text, "text")
        pairs = None if text_pair is None else _checked_batch(text_pair, "text_pair")
        if pairs is not None and (len(pairs) != len(texts) or isinstance(text_pair, str) != single):
            raise DataError(f"tokenizer: text_pair must match text ({len(texts)} texts, {len(pairs)} pairs)")
        if padding not in _PADDING:
            raise DataError(f"tokenizer: padding must be one of False, True, 'longest', 'max_length', got {padding!r}")
        if return_tensors not in _TENSORS:
            raise DataError(f"tokenizer: return_tensors must be None, 'np' or 'pd', got {return_tensors!r}")
        limit = self._limit(max_length, _PADDING[padding])
        if _PADDING[padding] and self.pad_token is None:
            raise DataError(f"tokenizer {self.name!r} has no pad token; call it with padding=False")
        if truncation:
            self.backend.enable_truncation(limit)
        try:
            inputs = texts if pairs is None else list(zip(texts, pairs, strict=True))
            encodings = self.backend.encode_batch(inputs, add_special_tokens=add_special_tokens)
        finally:
            self.backend.no_truncation()
        _refuse_too_long(encodings, limit, truncation)
        if _PADDING[padding]:
            width = limit if _PADDING[padding] == "max_length" else max((len(e.ids) for e in encodings), default=0)
            for e in encodings:
                e.pad(width, pad_id=self.pad_token_id, pad_token=self.pad_token)
        out = {
            "input_ids": [e.ids for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }
        if return_offsets_mapping:
            out["offset_mapping"] = [[tuple(o) for o in e.offsets] for e in encodings]
        if return_tensors is not None:
            return _as_tensors(out, return_tensors)
        return {k: v[0] for k, v in out.items()} if single else out

    def _limit(self, max_length, padding) -> int:
        if max_length is None:
            return self.model_max_length
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise DataError(f"tokenizer: max_length must be a positive int, got {max_length!r}")
        if max_length > self.model_max_length:
            raise DataError(f"tokenizer: max_length {max_length} exceeds the model's {self.model_max_length} positions")
        return max_length


def _checked_text(text, what: str) -> str:
    if not isinstance(text, str):
        raise DataError(f"tokenizer: {what} must be a str or a list of str, got {type(text).__name__}")
    return text


def _checked_batch(text, what: str) -> list[str]:
    texts = [text] if isinstance(text, str) else text
    if not isinstance(texts, list | tuple):
        raise DataError(f"tokenizer: {what} must be a str or a list of str, got {type(text).__name__}")
    return [_checked_text(t, what) for t in texts]


def _refuse_too_long(encodings, limit: int, truncated: bool) -> None:
    """No sequence past ``limit``: without truncation that is the caller's text; with it, a limit
    below the special tokens' count (``tokenizers`` then returns the sequence uncut)."""
    for i, e in enumerate(encodings):
        if len(e.ids) <= limit:
            continue
        if truncated:
            raise DataError(f"max_length {limit} leaves no room for text {i} beside its special tokens; raise it")
        raise DataError(
            f"text {i} is {len(e.ids)} tokens, longer than the limit of {limit} positions; "
            "pass truncation=True to cut it"
        )


def _as_tensors(out: dict, kind: str) -> dict:
    lengths = {len(row) for row in out["input_ids"]}
    if len(lengths) > 1:
        raise DataError(f"tokenizer: texts of {sorted(lengths)} tokens make no tensor; pass padding=True")
    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}
    if kind == "pd":
        from paddlectl.framework import to_tensor

        return {k: to_tensor(v) for k, v in arrays.items()}
    return arrays


def _bert_wordpiece(vocab: Path, lowercase: bool) -> tokenizers.Tokenizer:
    """BERT's tokenizer from a ``vocab.txt``: BERT normaliser, BERT pre-tokeniser, [CLS] A [SEP] (B [SEP])."""
    try:
        backend = tokenizers.Tokenizer(models.WordPiece.from_file(str(vocab), unk_token="[UNK]"))
    except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception on a malformed vocabulary
        raise CheckpointError(f"{vocab}: not a WordPiece vocabulary ({exc})") from None
    missing = [t for t in ("[CLS]", "[SEP]", "[UNK]") if backend.token_to_id(t) is None]
    if missing:
        raise CheckpointError(f"{vocab}: WordPiece vocabulary lacks the special tokens {missing}")
    backend.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = ("[CLS]", backend.token_to_id("[CLS]")), ("[SEP]", backend.token_to_id("[SEP]"))
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[cls, sep]
    )
    backend.decoder = decoders.WordPiece()
    return backend


class AutoTokenizer:
    """``AutoTokenizer.from_pretrained(dir)``: a checkpoint directory's tokenizer, no network."""

    @staticmethod
    def from_pretrained(directory) -> Tokenizer:
        """``tokenizer.json`` if present, else ``vocab.txt`` (WordPiece, lower-cased unless
        ``tokenizer_config.json`` says ``do_lower_case: false``); the limit is the config's
        ``model_max_length``, else ``config.json``'s ``max_position_embeddings``, else 512."""
        root = Path(directory)
        if not root.is_dir():
            raise DataError(
                f"tokenizer: {root} is not a directory (expected a checkpoint with tokenizer.json or vocab.txt)"
            )
        config = read_json(root / "tokenizer_config.json")
        if (root / "tokenizer.json").is_file():
            try:
                backend = tokenizers.Tokenizer.from_file(str(root / "tokenizer.json"))
            except Exception as exc:  # noqa: BLE001 - tokenizers raises a bare Exception on a malformed file
                raise CheckpointError(f"{root / 'tokenizer.json'}: not a tokenizers file ({exc})") from None
        elif (root / "vocab.txt").is_file():
            backend = _bert_wordpiece(root / "vocab.txt", bool(config.get("do_lower_case", True)))
        else:
            raise CheckpointError(f"tokenizer: {root} has neither tokenizer.json nor vocab.txt")
        limit = config.get("model_max_length")
        if limit is None or (isinstance(limit, int | float) and limit > _UNSET_MAX):
            limit = read_json(root / "config.json").get("max_position_embeddings", 512)
        if not isinstance(limit, int | float) or isinstance(limit, bool) or limit < 2 or limit != int(limit):
            raise CheckpointError(f"{root}: the tokenizer's limit {limit!r} must be an int >= 2 (model_max_length)")
        pad = config.get("pad_token", read_json(root / "special_tokens_map.json").get("pad_token", "[PAD]"))
        pad = pad.get("content") if isinstance(pad, dict) else pad
        if pad is not None and not isinstance(pad, str):
            raise CheckpointError(f"{root}: pad_token must be a string, got {pad!r}")
        return Tokenizer(backend, model_max_length=int(limit), pad_token=pad, name=root.name)


def segment_words(text: str) -> list[str]:
    """Chinese word segmentation (jieba's precise mode), for tasks that need words, not WordPieces."""
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary-loading lines on stderr are not ours to print
    return jieba.lcut(_checked_text(text, "text"))
