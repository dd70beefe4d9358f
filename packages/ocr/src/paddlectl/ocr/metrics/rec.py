"""Text recognition accuracy and 1 - normalised edit distance, as PaddleOCR's ``RecMetric``.

PaddleOCR compares strings with spaces removed by default (``ignore_space``): a recogniser that
drops word spaces still scores full marks. ``acc_with_space`` is always reported beside it, so that
loss is visible. ``norm_edit_dis`` is 1 - the mean of rapidfuzz's normalised Levenshtein distance
(edits / the longer string), on the same strings ``acc`` compares. Ratios are exact (PaddleOCR adds
1e-5 to the denominator); an empty set gives 0.
"""

from __future__ import annotations

import string

from rapidfuzz.distance import Levenshtein

from paddlectl.framework.errors import DataError

from .base import OCRMetric, as_list, ratio

_KEPT = frozenset(string.digits + string.ascii_letters)


def text_of(item, what: str) -> str:
    """A string, or the text of a ``(text, score)`` pair as PaddleOCR's decoders return it."""
    if isinstance(item, tuple | list) and item:
        item = item[0]
    if not isinstance(item, str):
        raise DataError(f"{what} must be a string or a (text, score) pair, got {type(item).__name__}")
    return item


def comparable(text: str, ignore_space: bool, is_filter: bool) -> str:
    """The string PaddleOCR compares: spaces dropped (``ignore_space``); with ``is_filter`` only
    ASCII letters and digits, lower-cased."""
    if ignore_space:
        text = text.replace(" ", "")
    if is_filter:
        text = "".join(c for c in text if c in _KEPT).lower()
    return text


class RecMetric(OCRMetric):
    """Streaming rec metric: ``update(preds, labels)`` per batch (strings or ``(text, score)``
    pairs, one per line image), ``accumulate()`` -> [acc, acc_with_space, norm_edit_dis] (``name()``
    order), ``result()`` -> the same as a dict."""

    NAMES = ("acc", "acc_with_space", "norm_edit_dis")

    def __init__(self, ignore_space: bool = True, is_filter: bool = False, main_indicator: str = "acc") -> None:
        self.ignore_space = bool(ignore_space)
        self.is_filter = bool(is_filter)
        super().__init__(main_indicator)

    def reset(self) -> None:
        self.count = self.correct = self.correct_with_space = 0
        self.distance = 0.0

    def update(self, preds, labels) -> None:
        preds, labels = as_list(preds, "RecMetric preds"), as_list(labels, "RecMetric labels")
        if len(preds) != len(labels):
            raise DataError(
                f"RecMetric.update: {len(preds)} predictions for {len(labels)} labels; pass one of each per line"
            )
        for i, (pred, label) in enumerate(zip(preds, labels, strict=True)):
            pred, label = text_of(pred, f"prediction {i}"), text_of(label, f"label {i}")
            a = comparable(pred, self.ignore_space, self.is_filter)
            b = comparable(label, self.ignore_space, self.is_filter)
            self.correct += a == b
            self.correct_with_space += comparable(pred, False, self.is_filter) == comparable(
                label, False, self.is_filter
            )
            self.distance += Levenshtein.normalized_distance(a, b)
            self.count += 1

    def accumulate(self) -> list[float]:
        if not self.count:
            return [0.0, 0.0, 0.0]
        return [
            ratio(self.correct, self.count),
            ratio(self.correct_with_space, self.count),
            1.0 - self.distance / self.count,
        ]
