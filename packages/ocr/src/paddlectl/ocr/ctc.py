"""CTC decoding with a character dictionary (PaddleOCR's ``CTCLabelDecode``): index 0 is the blank,
the dictionary follows, and a space is appended as the last class when ``use_space_char`` is set.

Greedy decoding is what PaddleOCR serves; prefix beam search sums every alignment of a prefix, so
it can find a text whose alignments together outweigh the single best path.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

DEFAULT_CHARACTERS = "0123456789abcdefghijklmnopqrstuvwxyz"
"""PaddleOCR's dictionary when no ``character_dict_path`` is given (labels are lower-cased then)."""


def read_dictionary(path: str | os.PathLike) -> list[str]:
    """One character per line of a UTF-8 file (PaddleOCR's ``ppocr_keys`` format); a line's own
    spaces are kept, its line break is not."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"character dictionary {str(path)!r} does not exist; check character_dict_path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read character dictionary {str(path)!r} ({exc}); it must be UTF-8 text") from None
    characters = [line.rstrip("\r") for line in text.split("\n")]
    while characters and characters[-1] == "":
        characters.pop()
    if not characters or "" in characters:
        where = "is empty" if not characters else f"has an empty line {characters.index('') + 1}"
        raise DataError(f"character dictionary {str(path)!r} {where}; write one character per line")
    return characters


def ctc_classes(characters: list[str], use_space_char: bool) -> list[str]:
    """The model's classes: blank (""), the characters, then " " when ``use_space_char``."""
    return ["", *characters, *([" "] if use_space_char else [])]


def dictionary_classes(characters: list[str]) -> list[str]:
    """The classes of PaddleOCR's released recognisers (trained with ``use_space_char``)."""
    return ctc_classes(characters, True)


def check_classes(probs: np.ndarray, classes: list[str]) -> None:
    if probs.ndim != 3 or probs.shape[-1] != len(classes):
        raise DataError(
            f"ctc decode: the model gives {probs.shape[-1]} classes but the dictionary has {len(classes)} "
            "(blank + characters [+ space]); use the dictionary the recogniser was trained with"
        )


def ctc_greedy_decode(probs: np.ndarray, classes: list[str]) -> list[tuple[str, float]]:
    """(text, mean confidence of the kept steps) per row of [B, T, C] probabilities: argmax per
    step, repeats merged, blanks dropped."""
    check_classes(probs, classes)
    index = probs.argmax(axis=2)
    best = probs.max(axis=2)
    out = []
    for idx, conf in zip(index, best, strict=True):
        keep = np.ones(len(idx), dtype=bool)
        keep[1:] = idx[1:] != idx[:-1]
        keep &= idx != 0
        text = "".join(classes[i] for i in idx[keep])
        out.append((text, float(np.mean(conf[keep])) if keep.any() else 0.0))
    return out


def _extend(grown: dict, prefix: tuple[int, ...], blank: float = -np.inf, label: float = -np.inf) -> None:
    """Add path probability mass (log) ending in a blank / in the prefix's last label."""
    entry = grown.setdefault(prefix, [-np.inf, -np.inf])
    entry[0], entry[1] = np.logaddexp(entry[0], blank), np.logaddexp(entry[1], label)


def _prefix_beam(log_probs: np.ndarray, beam_width: int) -> tuple[tuple[int, ...], float]:
    """The most probable label sequence of one [T, C] log-probability matrix and its log probability
    (summed over its alignments), keeping ``beam_width`` prefixes per step."""
    # prefix -> (log P(prefix, path ends in blank), log P(prefix, path ends in its last label))
    beams: dict[tuple[int, ...], tuple[float, float]] = {(): (0.0, -np.inf)}
    for step in log_probs:
        grown: dict[tuple[int, ...], list[float]] = {}
        # only the step's ``beam_width`` likeliest labels extend a prefix
        candidates = (1 + np.argsort(-step[1:], kind="stable")[:beam_width]).tolist()
        for prefix, (p_blank, p_label) in beams.items():
            total = np.logaddexp(p_blank, p_label)
            _extend(grown, prefix, blank=total + step[0])
            if prefix:
                _extend(grown, prefix, label=p_label + step[prefix[-1]])  # a repeat without a blank merges
            for c in candidates:
                # a repeated label needs a blank between, so only blank-ending paths extend it
                _extend(grown, (*prefix, c), label=(p_blank if prefix and c == prefix[-1] else total) + step[c])
        ranked = sorted(grown.items(), key=lambda kv: -np.logaddexp(*kv[1]))
        beams = {prefix: (b, lab) for prefix, (b, lab) in ranked[:beam_width]}
    prefix, (p_blank, p_label) = max(beams.items(), key=lambda kv: np.logaddexp(*kv[1]))
    return prefix, float(np.logaddexp(p_blank, p_label))


def ctc_beam_decode(probs: np.ndarray, classes: list[str], beam_width: int = 10) -> list[tuple[str, float]]:
    """(text, probability of that text summed over its alignments) per row of [B, T, C]
    probabilities, by CTC prefix beam search. When no prefix is pruned (``beam_width`` at least the
    number of characters and of prefixes alive) the search is exact."""
    check_classes(probs, classes)
    if not isinstance(beam_width, int) or beam_width < 1:
        raise DataError(f"beam_width must be a positive integer, got {beam_width!r}")
    with np.errstate(divide="ignore"):
        log_probs = np.log(np.asarray(probs, dtype="float64"))
    out = []
    for row in log_probs:
        prefix, log_p = _prefix_beam(row, beam_width)
        out.append(("".join(classes[i] for i in prefix), float(np.exp(log_p))))
    return out
