"""Random line texts over a character set, shaped like printed text rather than uniform noise: words
(mostly lower case, some capitalised or upper case), numbers, punctuation attached to words, a few
symbol groups, and runs of CJK characters (no space next to a CJK character, as Chinese is set). Every character of the set can
appear; what a recogniser learns from such lines carries over to real text."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .corpus import cut

ATTACHED = 0.2
"""Chance of a punctuation mark after a word or number (and half that, before it)."""


def is_cjk(char: str) -> bool:
    """CJK scripts and full-width forms: U+2E80 onwards, but not the surrogates/private use."""
    return 0x2E80 <= ord(char) < 0xD800 or 0xF900 <= ord(char) < 0x10000


@dataclass(frozen=True)
class Classes:
    """An alphabet split by role, and how often each kind of token is drawn."""

    lower: str
    upper: str
    digits: str
    cjk: str
    other: str

    @property
    def weights(self) -> np.ndarray:
        """word, number, symbol group, CJK run: only kinds the alphabet can make."""
        has = [bool(self.lower or self.upper), bool(self.digits), bool(self.other), bool(self.cjk)]
        base = np.array([0.65, 0.15, 0.08, 1.5]) * has
        return base / base.sum()


@functools.lru_cache(maxsize=64)
def classes(alphabet: str) -> Classes:
    """Split ``alphabet`` (no spaces in it): letters by case (caseless scripts count as lower), digits,
    CJK, and everything else (punctuation, symbols)."""
    lower, upper, digits, cjk, other = [], [], [], [], []
    for c in alphabet:
        if is_cjk(c) and c.isalpha():
            cjk.append(c)
        elif c.isalpha():
            (upper if c.isupper() else lower).append(c)
        elif c.isdigit():
            digits.append(c)
        else:
            other.append(c)
    return Classes(*("".join(part) for part in (lower, upper, digits, cjk, other)))


def _pick(rng: np.random.Generator, chars: str, count: int = 1) -> str:
    return "".join(chars[i] for i in rng.integers(0, len(chars), size=count))


def _word(rng: np.random.Generator, c: Classes) -> str:
    size = 1 + min(int(rng.geometric(0.22)), 11)
    case = rng.random()
    if c.upper and (case < 0.1 or not c.lower):
        return _pick(rng, c.upper, size)
    if c.upper and case < 0.3:
        return _pick(rng, c.upper) + (_pick(rng, c.lower, size - 1) if size > 1 else "")
    return _pick(rng, c.lower, size)


def _token(rng: np.random.Generator, c: Classes) -> str:
    kind = rng.choice(4, p=c.weights)
    if kind == 2:
        return _pick(rng, c.other, 1 + int(rng.random() < 0.3))
    if kind == 3:
        return _pick(rng, c.cjk, int(rng.integers(2, 9)))
    token = _word(rng, c) if kind == 0 else _pick(rng, c.digits, int(rng.integers(1, 7)))
    if c.other and rng.random() < ATTACHED:
        token += _pick(rng, c.other)
    if c.other and rng.random() < ATTACHED / 2:
        token = _pick(rng, c.other) + token
    return token


def sample_text(rng: np.random.Generator, alphabet: str, length: int) -> str:
    """About ``length`` characters (spaces included, at most ``length``) of tokens over ``alphabet``;
    never a space at either end."""
    c = classes(alphabet)
    text = ""
    while len(text) < length:
        token = _token(rng, c)
        joint = "" if not text or is_cjk(text[-1]) or is_cjk(token[0]) else " "
        text += joint + token
    return text[:length].rstrip()


def line_text(rng: np.random.Generator, alphabet: str, length: int, corpus: tuple[str, ...] = ()) -> str:
    """A cut of ``corpus`` when one is given and fits the font, else generated words."""
    piece = cut(rng, corpus, alphabet, length) if corpus else None
    return piece or sample_text(rng, alphabet, length)
