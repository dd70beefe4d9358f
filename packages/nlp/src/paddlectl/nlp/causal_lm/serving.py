"""Continuing a prompt with an exported ``nlp.causal_lm`` model: ``generate()`` over the predictor.

The exported program takes ``input_ids`` of any length (a symbolic sequence dim) and has no cache
inputs, so every step runs the whole sequence so far (``use_cache=False``). The prompt's
characters outside the vocabulary become ``[UNK]`` and are listed in the result; ``[UNK]`` and
``[PAD]`` are never generated (``[UNK]`` stands for many characters, none of which it could print).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..generation import generate
from ..text_cls.vocab import PAD, UNK, CharTable
from .task import GENERATION_DEFAULTS, encode_prompt, read_prompt

NEWLINE = "\n"


class ServedLM:
    """The predictor as ``generate`` takes a model: ids -> logits, with the sizes it must respect."""

    def __init__(self, run: Callable[[list[np.ndarray]], list[np.ndarray]], vocab_size: int, positions: int) -> None:
        self.run = run
        self.config = SimpleNamespace(vocab_size=vocab_size, max_position_embeddings=positions)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        return self.run([ids])[0]


def generate_served(run, pre: dict, post: dict, prompt: Any, **options) -> dict:
    """``{"prompt", "text", "score", "unknown"}``: ``prompt`` (text or a file) continued by the model
    behind ``run`` (``Predictor.run``) with the stored PostProcess settings, ``options`` (not None)
    overriding them; with ``stop_at_newline`` the text ends at the end of its sentence."""
    settings = {**GENERATION_DEFAULTS, **post, **{k: v for k, v in options.items() if v is not None}}
    vocab = CharTable(pre["vocab"])
    positions = int(pre["max_position_embeddings"])
    text = read_prompt(prompt)
    ids, unknown = encode_prompt(vocab, text, positions)
    newline = vocab.ids.get(NEWLINE) if settings["stop_at_newline"] else None
    out, scores = generate(
        ServedLM(run, len(vocab), positions),
        ids[None, :],
        max_length=settings["max_length"],
        decode_strategy=settings["decode_strategy"],
        top_k=settings["top_k"],
        top_p=settings["top_p"],
        temperature=settings["temperature"],
        eos_token_id=newline,
        use_cache=False,
        seed=settings["seed"],
        suppress_tokens=[vocab.ids[PAD], vocab.ids[UNK]],
    )
    tokens = list(out[0])
    if newline in tokens:
        tokens = tokens[: tokens.index(newline)]
    text_out = "".join(vocab.tokens[i] for i in tokens)
    return {"prompt": text, "text": text_out, "score": float(scores[0]), "unknown": unknown}


__all__ = ["ServedLM", "generate_served"]
