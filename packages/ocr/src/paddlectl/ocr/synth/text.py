"""Random line texts over a character set: words of Latin-like scripts are separated by single spaces,
CJK characters run on (no spaces between them), as printed text does."""

from __future__ import annotations

import numpy as np

WORD_BREAK = 0.18
"""Chance of a space after a non-CJK character: words of about 5 characters on average."""


def is_cjk(char: str) -> bool:
    """CJK scripts and full-width forms: U+2E80 onwards, but not the surrogates/private use."""
    return 0x2E80 <= ord(char) < 0xD800 or 0xF900 <= ord(char) < 0x10000


def sample_text(rng: np.random.Generator, alphabet: str, length: int) -> str:
    """``length`` characters, spaces included, drawn uniformly from ``alphabet`` (no spaces in it), with
    spaces between words; never a space at either end."""
    picks = rng.integers(0, len(alphabet), size=length)
    breaks = rng.random(length) < WORD_BREAK
    out: list[str] = []
    for pick, brk in zip(picks, breaks, strict=True):
        if len(out) >= length:
            break
        char = alphabet[pick]
        if brk and 0 < len(out) < length - 1 and not is_cjk(char) and not is_cjk(out[-1]):
            out.append(" ")
        out.append(char)
    return "".join(out)
