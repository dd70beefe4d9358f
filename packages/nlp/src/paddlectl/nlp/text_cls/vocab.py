"""The character table of the text and token classifiers: ``[PAD]`` 0, ``[UNK]`` 1, then the
training text's characters by falling frequency (ties in code-point order), so one text always
gives one table. Padding has its own id, so a sequence's length is its count of non-zero ids even
when it holds unknown characters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError

PAD, UNK = "[PAD]", "[UNK]"


class CharTable:
    """Characters <-> ids; ``encode`` pads or truncates to a fixed length."""

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        if tokens[:2] != [PAD, UNK]:
            raise DataError(f"a character table starts with {PAD}, {UNK}; got {tokens[:2]}")
        bad = [t for t in tokens[2:] if not isinstance(t, str) or len(t) != 1]
        if bad:
            raise DataError(f"character table entry {bad[0]!r} is not one character")
        if len(set(tokens)) != len(tokens):
            raise DataError("the character table lists a character twice")
        self.tokens = tokens
        self.ids = {t: i for i, t in enumerate(tokens)}

    @classmethod
    def from_texts(cls, texts: Iterable[str], min_freq: int = 1) -> CharTable:
        if isinstance(min_freq, bool) or not isinstance(min_freq, int) or min_freq < 1:
            raise ConfigError(f"min_freq must be a positive integer, got {min_freq!r}")
        counts = Counter()
        for text in texts:
            counts.update(text)
        kept = sorted((c for c, n in counts.items() if n >= min_freq), key=lambda c: (-counts[c], c))
        if not kept:
            raise DataError(f"no character occurs {min_freq} times in the training text; lower min_freq")
        return cls([PAD, UNK, *kept])

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, text: str, max_length: int) -> np.ndarray:
        """int64 ids of the first ``max_length`` characters, zero-padded to ``max_length``."""
        if not text:
            raise DataError("the text is empty; give at least one character")
        ids = np.zeros(max_length, dtype=np.int64)
        kept = text[:max_length]
        ids[: len(kept)] = [self.ids.get(c, 1) for c in kept]
        return ids
