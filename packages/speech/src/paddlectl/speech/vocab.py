"""A character or word vocabulary in PaddleSpeech's ``vocab.txt`` form: one token per line (a line may
carry an index after a space, which is ignored), ``<blank>`` first (the CTC blank is id 0), ``<unk>``
next, ``<eos>`` last; in character vocabularies a space between words is the token ``<space>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from paddlectl.framework.utils.fileio import atomic_write

from .errors import VocabularyError

BLANK, UNK, SPACE, EOS = "<blank>", "<unk>", "<space>", "<eos>"
UNITS = ("char", "word")


class Vocabulary:
    """Token <-> id maps; ``encode`` turns text into ids, ``decode`` ids back into text."""

    def __init__(self, tokens: list[str], unit: str = "char") -> None:
        if unit not in UNITS:
            raise VocabularyError(f"vocabulary unit must be one of {UNITS}, got {unit!r}")
        if not tokens or tokens[0] != BLANK:
            raise VocabularyError(f"a vocabulary's first token must be {BLANK} (the CTC blank, id 0), got {tokens[:1]}")
        repeated = sorted(t for t, n in Counter(tokens).items() if n > 1)
        if repeated:
            raise VocabularyError(f"vocabulary tokens repeat: {repeated[:5]}: each token must appear once")
        if unit == "char" and any(len(t) != 1 and not (t.startswith("<") and t.endswith(">")) for t in tokens):
            long = [t for t in tokens if len(t) != 1 and not t.startswith("<")]
            raise VocabularyError(f"a char vocabulary holds multi-character tokens {long[:5]}: use unit='word'")
        self.tokens, self.unit = list(tokens), unit
        self.ids = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def blank_id(self) -> int:
        return 0

    @property
    def unk_id(self) -> int | None:
        return self.ids.get(UNK)

    def split(self, text: str) -> list[str]:
        """``text`` as tokens: characters with ``<space>`` between words, or words."""
        words = text.split()
        if self.unit == "word":
            return words
        out: list[str] = []
        for i, word in enumerate(words):
            if i:
                out.append(SPACE)
            out.extend(word)
        return out

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; a token outside the vocabulary becomes ``<unk>``, or an error without one."""
        ids = []
        for token in self.split(text):
            if token in self.ids:
                ids.append(self.ids[token])
            elif self.unk_id is not None:
                ids.append(self.unk_id)
            else:
                raise VocabularyError(
                    f"{token!r} (in {text!r}) is not in the vocabulary and it has no {UNK}: rebuild it"
                )
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """Text of token ids (blank and ``<eos>`` dropped, ``<space>`` as a space)."""
        pieces = []
        for i in ids:
            if not 0 <= int(i) < len(self.tokens):
                raise VocabularyError(f"token id {i} is outside the vocabulary's {len(self.tokens)} ids")
            token = self.tokens[int(i)]
            if token in (BLANK, EOS):
                continue
            pieces.append(" " if token == SPACE else token)
        return ("".join(pieces) if self.unit == "char" else " ".join(pieces)).strip()

    def check_output_size(self, size: int) -> None:
        """Refuse a model whose output layer does not have one logit per token."""
        if size != len(self):
            raise VocabularyError(
                f"the model predicts {size} classes but the vocabulary has {len(self)} tokens: "
                "use the vocab.txt the model was trained with"
            )

    @classmethod
    def build(cls, texts: Iterable[str], unit: str = "char") -> Vocabulary:
        """The vocabulary of ``texts``: specials, then the tokens sorted (a stable order across runs)."""
        probe = cls([BLANK], unit)
        found = {t for text in texts for t in probe.split(text)} - {SPACE}
        specials = [BLANK, UNK, SPACE] if unit == "char" else [BLANK, UNK]
        return cls([*specials, *sorted(found), EOS], unit)

    @classmethod
    def load(cls, path: str | Path, unit: str = "char") -> Vocabulary:
        path = Path(path)
        if not path.is_file():
            raise VocabularyError(
                f"vocabulary {str(path)!r} does not exist: give the vocab.txt written with the corpus"
            )
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as exc:
            raise VocabularyError(f"vocabulary {str(path)!r} is not UTF-8 text ({exc.reason})") from None
        tokens = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                raise VocabularyError(f"{path} line {number} is empty: one token per line, no blank lines")
            tokens.append(line.split(" ")[0])
        return cls(tokens, unit)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        with atomic_write(path, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{t}\n" for t in self.tokens))
        return path
