"""Text encoded by a pretrained checkpoint's own tokenizer, for fine-tuning its encoder.

``Architecture.pretrained`` names a Hugging Face BERT/ERNIE directory (``paddlectl.nlp.checkpoint``)
or ``all-MiniLM-L6-v2`` (the packaged MiniLM files). The exported model carries the tokenizer
itself (its ``tokenizer.json`` text), so serving needs neither the directory nor the config.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tokenizers

from paddlectl.framework.errors import DataError

from ..assets import minilm_dir
from ..tokenizer import AutoTokenizer, Tokenizer

PACKAGED = {"all-MiniLM-L6-v2": minilm_dir}


def checkpoint_dir(pretrained: str) -> Path:
    """The directory ``pretrained`` names: a packaged model's name or a path."""
    return PACKAGED[pretrained]() if pretrained in PACKAGED else Path(pretrained)


class PretrainedText:
    """``encode(text, max_length)`` -> ids padded with the tokenizer's pad id (``[CLS] ... [SEP]``)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        if tokenizer.pad_token_id is None:
            raise DataError(f"tokenizer {tokenizer.name!r} has no pad token; a classifier pads its inputs")
        self.tokenizer = tokenizer

    @classmethod
    def from_checkpoint(cls, pretrained: str) -> PretrainedText:
        return cls(AutoTokenizer.from_pretrained(checkpoint_dir(pretrained)))

    @classmethod
    def from_spec(cls, spec: dict) -> PretrainedText:
        try:
            backend = tokenizers.Tokenizer.from_str(spec["tokenizer"])
        except Exception as exc:  # noqa: BLE001 - the tokenizers library raises plain Exceptions
            raise DataError(f"the exported model's tokenizer does not load ({exc}); export the model again") from None
        return cls(Tokenizer(backend, int(spec["model_max_length"])))

    def spec(self) -> dict:
        return {"tokenizer": self.tokenizer.backend.to_str(), "model_max_length": self.tokenizer.model_max_length}

    def encode(self, text: str, max_length: int) -> np.ndarray:
        if not text:
            raise DataError("the text is empty; give at least one character")
        ids = self.tokenizer(text, truncation=True, max_length=max_length, padding="max_length")["input_ids"]
        return np.asarray(ids, dtype=np.int64)
