"""Identify a licence from its text by curated phrases (``data/fingerprints.yaml``).

Used when a package ships a licence text instead of an identifier. A match needs every required
phrase, one of the alternative phrases, and none of the excluded ones, so a text that fits no
entry stays unidentified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .resources import load_data

_SPACE = re.compile(r"\s+")
_COMMENT = re.compile(r"^[ \t]*(#|//|/?\*+|;|--)[ \t]?", re.MULTILINE)


def _squash(text: str) -> str:
    """Lower case, comment markers at line starts removed, white space collapsed."""
    return _SPACE.sub(" ", _COMMENT.sub("", text)).strip().lower()


@dataclass(frozen=True)
class _Fingerprint:
    required: tuple[str, ...]
    alternatives: tuple[str, ...]
    excluded: tuple[str, ...]

    def matches(self, squashed: str) -> bool:
        return (
            all(p in squashed for p in self.required)
            and (not self.alternatives or any(p in squashed for p in self.alternatives))
            and not any(p in squashed for p in self.excluded)
        )


@cache
def _fingerprints() -> dict[str, _Fingerprint]:
    raw = load_data("fingerprints.yaml")
    return {
        key: _Fingerprint(*(tuple(_squash(p) for p in entry.get(part, [])) for part in ("all", "any", "none")))
        for key, entry in raw.items()
    }


def identify_text(text: str) -> list[str]:
    """SPDX ids of every licence whose fingerprint the text carries, in a stable order."""
    if not isinstance(text, str):
        raise TypeError(f"identify_text needs the licence text as str, got {type(text).__name__}")
    squashed = _squash(text)
    return [key for key, fingerprint in _fingerprints().items() if fingerprint.matches(squashed)]
