"""Character sets: named ones and PaddleOCR dictionary files (one character per line).

The space is never a dictionary entry (PaddleOCR appends it with ``use_space_char``); words are
separated by spaces when rendered."""

from __future__ import annotations

import string
from pathlib import Path

from paddlectl.framework.errors import ConfigError, DataError

from ..ctc import read_dictionary

CJK_PUNCTUATION = "，。、：；？！“”‘’（）《》【】"


def _gb2312_level1() -> str:
    """The 3,755 most common hanzi (GB2312 level 1, rows 16-55), decoded from the codec itself."""
    chars = []
    for row in range(0xB0, 0xD8):
        for cell in range(0xA1, 0xFF):
            try:
                chars.append(bytes((row, cell)).decode("gb2312"))
            except UnicodeDecodeError:  # row 55 ends at cell 0xF9
                continue
    return "".join(chars)


NAMED = {
    "latin": lambda: string.ascii_letters + string.digits + string.punctuation,
    "digits": lambda: string.digits,
    "cjk-common": lambda: _gb2312_level1() + CJK_PUNCTUATION,
}
"""``latin``: ASCII letters, digits, punctuation (the default); ``cjk-common``: GB2312 level-1 hanzi and
full-width punctuation (needs a CJK font)."""


def read_dict(path: Path) -> str:
    """A PaddleOCR dictionary file, read as the recogniser reads it (``ctc.read_dictionary``); a line
    ``" "`` is the space, and every line must hold one character."""
    chars = read_dictionary(path)
    for number, entry in enumerate(chars, start=1):
        if len(entry) != 1:
            raise DataError(
                f"charset file {str(path)!r} line {number}: {entry[:20]!r} is not one character; "
                "a PaddleOCR dictionary has one character per line"
            )
    return "".join(chars)


def resolve(specs: list[str]) -> str:
    """The union, in order and without repeats, of named sets and dictionary files."""
    chars: dict[str, None] = {}
    for spec in specs or ["latin"]:
        if spec in NAMED:
            found = NAMED[spec]()
        elif Path(spec).suffix or Path(spec).exists():
            found = read_dict(Path(spec))
        else:
            raise ConfigError(f"unknown charset {spec!r}; use one of {', '.join(NAMED)} or a dictionary file path")
        chars.update(dict.fromkeys(found))
    return checked("".join(chars))


def checked(chars: str) -> str:
    """``chars`` unless one cannot stand in a label line, or there are none but the space."""
    bad = [c for c in chars if c != " " and not c.isprintable()]
    if bad:
        raise DataError(f"charset holds unprintable characters {bad[:5]!r}; a label line cannot carry them")
    if not chars.replace(" ", ""):
        raise ConfigError("the charset is empty; pass a dictionary file with one character per line or a named set")
    return chars


def dictionary(chars: str) -> str:
    """``chars`` as a PaddleOCR dictionary file's text (the space left to ``use_space_char``)."""
    return "".join(f"{c}\n" for c in chars if c != " ")
