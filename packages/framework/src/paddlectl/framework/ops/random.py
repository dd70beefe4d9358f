"""The global random generator that ``paddle.seed`` resets: creation ops, dropout and initialisers draw from it."""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def seed(value: int):
    """Reset every random stream paddlectl uses, so a run repeats exactly (``paddle.seed``)."""
    global _generator
    _generator = np.random.default_rng(int(value))
    return _generator


def generator() -> np.random.Generator:
    return _generator


def get_rng_state() -> dict:
    return _generator.bit_generator.state


def set_rng_state(state: dict) -> None:
    _generator.bit_generator.state = state
