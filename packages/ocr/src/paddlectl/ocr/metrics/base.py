"""What the OCR metrics share: the framework's Metric protocol with a fixed list of names, a dict
view of the result, checked settings, and the empty-set convention for ratios."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.metric import Metric


def ratio(num: float, den: float) -> float:
    """``num / den``, 0 for an empty denominator (PaddleOCR's convention for empty sets)."""
    return num / den if den else 0.0


def hmean(precision: float, recall: float) -> float:
    return ratio(2 * precision * recall, precision + recall)


def check_fraction(value, what: str) -> float:
    """A threshold in [0, 1]; ConfigError otherwise (these come from a config's Metric section)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError(f"{what} must be a number in [0, 1], got {value!r}")
    return float(value)


def as_list(value, what: str) -> list:
    """A per-batch or per-image sequence (list, tuple or array; a string or mapping is refused)."""
    if isinstance(value, np.ndarray):
        return list(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return list(value)
    raise DataError(f"{what} must be a list (one entry per image/line/polygon), got {type(value).__name__}")


class OCRMetric(Metric):
    """A framework ``Metric`` reporting the fixed ``NAMES``: ``accumulate()`` gives the values in that
    order (what ``paddlectl train/eval`` log), ``result()`` the same as a dict. ``main_indicator``
    (PaddleOCR's Metric key) must be one of them."""

    NAMES: tuple[str, ...] = ()

    def __init__(self, main_indicator: str) -> None:
        if main_indicator not in self.NAMES:
            raise ConfigError(
                f"{type(self).__name__}: main_indicator {main_indicator!r} is not one of {', '.join(self.NAMES)}"
            )
        self.main_indicator = main_indicator
        self.reset()

    def name(self) -> list[str]:
        return list(self.NAMES)

    def result(self) -> dict[str, float]:
        return dict(zip(self.NAMES, self.accumulate(), strict=True))
