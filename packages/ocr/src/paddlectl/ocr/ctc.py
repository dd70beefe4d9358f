"""CTC greedy decoding with a character dictionary (PaddleOCR's ``CTCLabelDecode``): index 0 is the
blank, the dictionary follows, and a space is appended as the last class."""

from __future__ import annotations

import numpy as np


def dictionary_classes(characters: list[str]) -> list[str]:
    """The model's class list for a dictionary: blank, the characters, then ' '."""
    return ["", *characters, " "]


def ctc_greedy_decode(probs: np.ndarray, classes: list[str]) -> list[tuple[str, float]]:
    """(text, mean confidence of the kept steps) per row of [B, T, C] probabilities: argmax per
    step, repeats merged, blanks dropped."""
    if probs.shape[-1] != len(classes):
        raise ValueError(
            f"ctc decode: the model gives {probs.shape[-1]} classes but the dictionary has {len(classes)} "
            "(blank + characters + space); use the dictionary the recogniser was trained with"
        )
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
