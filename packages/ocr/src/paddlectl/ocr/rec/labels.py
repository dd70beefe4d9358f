"""The character dictionary, label encoding for CTC and CTC decoding (PaddleOCR's ``CTCLabelEncode``
and ``CTCLabelDecode``): blank at index 0, the dictionary's characters from 1, a space last when
``use_space_char``. Without a dictionary file the classes are digits and lower-case letters and
labels are lower-cased, as PaddleOCR does."""

from __future__ import annotations

import numpy as np

from paddlectl.framework.errors import ConfigError

from ..ctc import DEFAULT_CHARACTERS, ctc_beam_decode, ctc_classes, ctc_greedy_decode, read_dictionary


def dictionary(character_dict_path: str | None = None) -> tuple[list[str], bool]:
    """``(characters, lower)``: the file's characters, or PaddleOCR's default set (lower-casing labels)."""
    if character_dict_path is None:
        return list(DEFAULT_CHARACTERS), True
    return read_dictionary(character_dict_path), False


class CTCLabelEncode:
    """``data['label']`` (text) -> int64 [max_text_length] indices padded with the blank, and
    ``data['length']``. Characters outside the dictionary are dropped; a text that is empty after
    that, or longer than ``max_text_length``, drops the sample (None), as PaddleOCR does."""

    def __init__(self, max_text_length: int = 25, character_dict_path: str | None = None, use_space_char: bool = False):
        if not isinstance(max_text_length, int) or max_text_length < 1:
            raise ConfigError(f"CTCLabelEncode.max_text_length must be a positive integer, got {max_text_length!r}")
        characters, self.lower = dictionary(character_dict_path)
        classes = ctc_classes(characters, use_space_char)
        self.index = {c: i for i, c in enumerate(classes) if i}
        self.max_text_length = max_text_length

    def encode(self, text: str) -> list[int] | None:
        if not text or len(text) > self.max_text_length:
            return None
        text = text.lower() if self.lower else text
        indices = [self.index[c] for c in text if c in self.index]
        return indices or None

    def __call__(self, data: dict) -> dict | None:
        indices = self.encode(data["label"])
        if indices is None:
            return None
        data["length"] = np.int64(len(indices))
        data["label"] = np.array(indices + [0] * (self.max_text_length - len(indices)), dtype="int64")
        return data


class CTCLabelDecode:
    """Model outputs -> ``(text, score)`` per line; also turns encoded labels back into text."""

    def __init__(self, character_dict_path: str | None = None, use_space_char: bool = False, beam_width: int = 1):
        characters, _ = dictionary(character_dict_path)
        self.characters, self.use_space_char = characters, bool(use_space_char)
        self.classes = ctc_classes(characters, self.use_space_char)
        if not isinstance(beam_width, int) or beam_width < 1:
            raise ConfigError(f"CTCLabelDecode.beam_width must be a positive integer, got {beam_width!r}")
        self.beam_width = beam_width

    @classmethod
    def from_classes(cls, characters: list[str], use_space_char: bool, beam_width: int = 1) -> CTCLabelDecode:
        """The decoder an exported model's post-processing config describes (no dictionary file needed)."""
        decoder = cls.__new__(cls)
        decoder.characters, decoder.use_space_char = list(characters), bool(use_space_char)
        decoder.classes = ctc_classes(decoder.characters, decoder.use_space_char)
        decoder.beam_width = beam_width
        return decoder

    def __call__(self, probs: np.ndarray) -> list[tuple[str, float]]:
        """[B, T, C] probabilities -> (text, score): greedy (mean step confidence), or beam search
        (the text's probability) when ``beam_width`` > 1."""
        if self.beam_width > 1:
            return ctc_beam_decode(probs, self.classes, self.beam_width)
        return ctc_greedy_decode(probs, self.classes)

    def labels(self, label: np.ndarray) -> list[str]:
        """Encoded [B, max_text_length] labels (blank-padded) -> their texts."""
        return ["".join(self.classes[i] for i in row if i) for row in np.asarray(label, dtype="int64")]

    def config(self) -> dict:
        return {"character": self.characters, "use_space_char": self.use_space_char, "beam_width": self.beam_width}


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities over the last axis (the models return logits; serving turns them into these)."""
    shifted = np.asarray(logits, dtype="float64")
    shifted = np.exp(shifted - shifted.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def probabilities(out: np.ndarray) -> np.ndarray:
    """``out`` as probabilities over its last axis: kept where it already is one (a model that ends in
    a softmax, as PaddleOCR's exported ones do), else ``softmax``. Our trained models return logits."""
    out = np.asarray(out)
    if np.all(out >= 0) and np.allclose(out.sum(axis=-1), 1.0, atol=1e-4):
        return out.astype(np.float32, copy=False)
    return softmax(out)
