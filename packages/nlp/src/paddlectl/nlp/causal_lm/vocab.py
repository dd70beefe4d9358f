"""The character vocabulary of the causal LM: ``[UNK]`` first, then the characters of the training
text by falling frequency (ties in code-point order), so the same text always gives the same ids.

A newline is an ordinary character here: it ends a sentence, so a generation can stop at one.
A character outside the vocabulary (or rarer than ``min_freq`` in the training text) becomes
``[UNK]``; ``encode`` reports which characters it mapped so a caller can say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError

UNK = "[UNK]"


class CharVocab:
    """Characters <-> ids; ``tokens[0]`` is ``[UNK]``."""

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        if not tokens or tokens[0] != UNK:
            raise DataError(f"a character vocabulary starts with {UNK}, got {tokens[:1]}")
        if any(not isinstance(t, str) or len(t) != 1 for t in tokens[1:]):
            bad = next(t for t in tokens[1:] if not isinstance(t, str) or len(t) != 1)
            raise DataError(f"vocabulary entry {bad!r} is not one character")
        if len(set(tokens)) != len(tokens):
            raise DataError("the vocabulary lists a character twice")
        self.tokens = tokens
        self.ids = {t: i for i, t in enumerate(tokens)}

    @classmethod
    def from_texts(cls, texts: Iterable[str], min_freq: int = 1, max_size: int | None = None) -> CharVocab:
        """The characters seen at least ``min_freq`` times, the ``max_size - 1`` most frequent at most."""
        if not isinstance(min_freq, int) or min_freq < 1:
            raise ConfigError(f"min_freq must be a positive integer, got {min_freq!r}")
        if max_size is not None and (not isinstance(max_size, int) or max_size < 2):
            raise ConfigError(f"max_size must be an integer >= 2 ([UNK] and one character), got {max_size!r}")
        counts = Counter()
        for text in texts:
            counts.update(text)
        kept = sorted((c for c, n in counts.items() if n >= min_freq), key=lambda c: (-counts[c], c))
        if not kept:
            raise DataError(f"no character occurs {min_freq} times in the training text; lower min_freq")
        return cls([UNK, *kept[: None if max_size is None else max_size - 1]])

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, text: str) -> tuple[np.ndarray, list[str]]:
        """``(ids, unknown)``: int64 ids of ``text`` and the distinct characters mapped to [UNK]."""
        ids = np.fromiter((self.ids.get(c, 0) for c in text), dtype=np.int64, count=len(text))
        unknown = sorted({c for c in text if c not in self.ids})
        return ids, unknown

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.tokens[int(i)] for i in ids)


__all__ = ["UNK", "CharVocab"]
