"""Identify a licence from its text by curated phrases (``data/fingerprints.yaml``).

Used when a package ships a licence text instead of an identifier. A match needs every listed
phrase and none of the excluded ones, so a text that fits no entry stays unidentified.
"""

from __future__ import annotations

import re
from functools import cache

from .resources import load_data

_SPACE = re.compile(r"\s+")


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


@cache
def _fingerprints() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    raw = load_data("fingerprints.yaml")
    return {
        key: (tuple(_squash(p) for p in entry["all"]), tuple(_squash(p) for p in entry.get("none", [])))
        for key, entry in raw.items()
    }


def identify_text(text: str) -> list[str]:
    """SPDX ids of every licence whose fingerprint the text carries, in a stable order."""
    if not isinstance(text, str):
        raise TypeError(f"identify_text needs the licence text as str, got {type(text).__name__}")
    squashed = _squash(text)
    return [
        key
        for key, (required, excluded) in _fingerprints().items()
        if all(p in squashed for p in required) and not any(p in squashed for p in excluded)
    ]
