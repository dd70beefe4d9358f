"""Line texts cut from the user's own text (``--corpus``): a recogniser then sees the words and
character frequencies of its domain (invoices, IDs, addresses), not only random words."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

TRIES = 8
"""Random cuts tried for a font before falling back to generated words (the font lacks a glyph)."""


def read_corpus(path: Path) -> tuple[str, ...]:
    """The file's non-empty lines, each with its runs of whitespace made one space."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problem = "does not exist" if isinstance(exc, FileNotFoundError) else f"is not readable UTF-8 text ({exc})"
        raise DataError(f"corpus file {str(path)!r} {problem}; pass a UTF-8 text file") from None
    lines = tuple(" ".join(line.split()) for line in text.splitlines())
    lines = tuple(line for line in lines if line)
    if not lines:
        raise DataError(f"corpus file {str(path)!r} holds no text")
    return lines


def characters(corpus: tuple[str, ...]) -> str:
    """Every character the corpus uses but the space, in order of first use."""
    return "".join(dict.fromkeys(c for line in corpus for c in line if c != " "))


@functools.lru_cache(maxsize=64)
def _allowed(alphabet: str) -> frozenset[str]:
    return frozenset(alphabet) | {" "}


def cut(rng: np.random.Generator, corpus: tuple[str, ...], alphabet: str, length: int) -> str | None:
    """At most ``length`` characters of a random corpus line, starting at a word, that ``alphabet``
    can draw; None when no such cut turned up in ``TRIES`` draws."""
    allowed = _allowed(alphabet)
    for _ in range(TRIES):
        line = corpus[rng.integers(len(corpus))]
        start = int(rng.integers(0, max(1, len(line) - length + 1)))
        start = line.rfind(" ", 0, start) + 1 if start else 0
        piece = line[start : start + length].strip()
        if piece and allowed.issuperset(piece):
            return piece
    return None
