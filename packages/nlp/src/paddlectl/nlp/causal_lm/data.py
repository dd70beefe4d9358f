"""The causal LM's text: People's Daily 1998 sentences (the words of each joined, one sentence a
line), split into training and held-out sentences, each part kept in file order so consecutive
sentences of an article stay together; and the fixed-length windows a model trains on.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.io import Dataset

from ..corpora import held_out_split, peoples_daily
from ..text_cls.vocab import CharTable


@lru_cache(maxsize=4)
def corpus_texts(root: str | None, held_out: float, split_seed: int) -> tuple[str, str]:
    """``(training text, held-out text)``: sentences one a line; cached, since train, export and eval
    in one process all ask for it."""
    sentences = ["".join(word for word, _ in sentence) for sentence in peoples_daily(Path(root) if root else None)]
    train, held = held_out_split(list(range(len(sentences))), held_out, split_seed)
    return tuple("".join(sentences[i] + "\n" for i in sorted(part)) for part in (train, held))


@lru_cache(maxsize=4)
def corpus_vocab(root: str | None, held_out: float, split_seed: int, min_freq: int) -> CharTable:
    """The character table of the training text (cached like the text): ``[PAD]``, ``[UNK]``, then
    its characters by falling frequency; a newline is one of them, so generation can end a sentence."""
    return CharTable.from_texts([corpus_texts(root, held_out, split_seed)[0]], min_freq)


class TextWindows(Dataset):
    """``(input ids, next ids)`` pairs of ``seq_len`` ids from consecutive windows of ``text``;
    ``max_windows`` keeps that many, spread evenly over the text (a bounded evaluation set)."""

    def __init__(self, text: str, vocab: CharTable, seq_len: int, max_windows: int | None = None) -> None:
        if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 1:
            raise ConfigError(f"dataset seq_len must be a positive integer, got {seq_len!r}")
        if max_windows is not None and (not isinstance(max_windows, int) or max_windows < 1):
            raise ConfigError(f"dataset max_windows must be a positive integer or null, got {max_windows!r}")
        count = (len(text) - 1) // seq_len
        if count < 1:
            raise DataError(f"the text has {len(text)} characters, too few for one window of {seq_len} + 1")
        starts = np.arange(count) * seq_len
        if max_windows is not None and max_windows < count:
            starts = starts[np.linspace(0, count - 1, max_windows).round().astype(np.int64)]
        self.text, self.seq_len, self.starts = text, seq_len, starts
        self.ids = vocab.encode(text, len(text))

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int):
        start = int(self.starts[index])
        window = self.ids[start : start + self.seq_len + 1]
        return window[:-1], window[1:]

    def raw(self, index: int) -> tuple[str, np.ndarray]:
        """The window's input as text (what serving is given) and its next-character ids."""
        start = int(self.starts[index])
        return self.text[start : start + self.seq_len], self.ids[start + 1 : start + self.seq_len + 1]


__all__ = ["TextWindows", "corpus_texts", "corpus_vocab"]
