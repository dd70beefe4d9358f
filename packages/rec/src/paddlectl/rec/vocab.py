"""Id vocabularies: raw ids (user ids, zip codes, occupations) to contiguous embedding rows.

Row 0 is reserved for values never seen when the vocabulary was built (cold-start users and
items, new categories), so serving an unseen id degrades to a learned "unknown" row instead of
failing; ``encode`` counts how often that happened so the fallback is visible.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .errors import DataError

UNSEEN = 0


def _keys(values) -> np.ndarray:
    """Raw values as strings, the one key type (an id read from CSV and from JSON must match)."""
    array = np.asarray(values, dtype=object).ravel()
    keys = [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in array]
    return np.asarray(keys, dtype=str)


class Vocab:
    """Sorted distinct raw values; value ``values[i]`` is row ``i + 1``, row 0 is ``UNSEEN``."""

    def __init__(self, values: Iterable) -> None:
        self.values = np.unique(_keys(list(values)))

    @property
    def size(self) -> int:
        """Embedding rows the vocabulary needs (its values plus the unseen row)."""
        return len(self.values) + 1

    def encode(self, values) -> tuple[np.ndarray, int]:
        """``(indices int64, unseen count)``: each value's row, ``UNSEEN`` for values not in it."""
        keys = _keys(values)
        if not len(self.values):
            return np.zeros(len(keys), np.int64), len(keys)
        pos = np.minimum(np.searchsorted(self.values, keys), len(self.values) - 1)
        found = self.values[pos] == keys
        return np.where(found, pos + 1, UNSEEN).astype(np.int64), int((~found).sum())

    def to_list(self) -> list[str]:
        """JSON-able form, stored with an exported model so serving maps raw ids the same way."""
        return self.values.tolist()

    @classmethod
    def from_list(cls, values) -> Vocab:
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise DataError("a stored vocabulary must be a list of strings; re-export the model")
        return cls(values)
