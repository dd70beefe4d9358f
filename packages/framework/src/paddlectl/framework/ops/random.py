"""The random streams ``paddle.seed`` resets.

Paddle's own draws (rand, randn, uniform, normal, randint, randperm, bernoulli, dropout, the
initialisers) come from Paddle's CPU engine, reproduced bit for bit (``kernels/mt19937.py``), so a
seeded script prints Paddle's numbers. Samplers Paddle has no CPU engine kernel for (distributions,
the DataLoader's shuffling) draw from a NumPy generator seeded alongside; data augmentation draws
from Python's ``random`` and NumPy's global stream, as Paddle's transforms do (the trainer seeds and
checkpoints those).
"""

from __future__ import annotations

import contextlib
from statistics import NormalDist

import numpy as np

from ..errors import DataError
from ..kernels import mt19937

_generator = np.random.default_rng()
_engine: np.ndarray | None = None
"""Made at the first draw, not at import: seeding runs a compiled kernel, and the first compiled
call of a process costs ~0.4 s of Numba start-up that a command which never draws should not pay."""


def _state() -> np.ndarray:
    """The engine's state; an unseeded one from 53 random bits (as Paddle seeds its default) first."""
    global _engine
    if _engine is None:
        _engine = mt19937.seeded_state(int(_generator.integers(2**53)))
    return _engine


def seed(value: int):
    """Reset every random stream paddlectl uses, so a run repeats exactly (``paddle.seed``)."""
    global _generator, _engine
    _generator = np.random.default_rng(int(value))
    _engine = mt19937.seeded_state(int(value))
    return _generator


@contextlib.contextmanager
def fresh_engine(op_seed: int):
    """Draw from an engine seeded with ``op_seed`` alone, leaving the global stream where it was (a
    Paddle op's non-zero ``seed`` attribute)."""
    global _engine
    saved, _engine = _engine, mt19937.direct_state(op_seed)
    try:
        yield
    finally:
        _engine = saved


def generator() -> np.random.Generator:
    return _generator


def get_rng_state() -> dict:
    """Both streams, as JSON-able values (a checkpoint keeps them)."""
    return {"engine": [int(w) for w in _state()], "numpy": _generator.bit_generator.state}


def set_rng_state(state: dict) -> None:
    """Restore what ``get_rng_state`` returned; DataError names what is malformed (states come from files)."""
    global _engine
    engine = state.get("engine") if isinstance(state, dict) else None
    size = mt19937.STATE_SIZE
    if (
        not isinstance(engine, list | tuple)
        or len(engine) != size
        or not all(isinstance(w, int) and 0 <= w < 2**64 for w in engine)
        or engine[-1] > size - 1
    ):
        raise DataError(f"random state: 'engine' must be {size} unsigned 64-bit integers, as get_rng_state gives")
    try:
        _generator.bit_generator.state = state.get("numpy")
    except (TypeError, ValueError, KeyError) as exc:
        raise DataError(f"random state: 'numpy' is not a NumPy generator state ({exc})") from None
    _engine = np.asarray(engine, dtype=np.uint64)


def _draw_dtype(dtype) -> np.dtype:
    """Paddle draws float64 in double and every other float type in float (then casts)."""
    return np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)


def uniform(shape, low: float, high: float, dtype=np.float32) -> np.ndarray:
    out = np.empty(tuple(shape), _draw_dtype(dtype))
    mt19937.fill_uniform(_state(), out, low, high)
    return out.astype(dtype, copy=False)


def dropped(x: np.ndarray, p: float, factor) -> tuple[np.ndarray, np.ndarray]:
    """``(x * mask, mask)`` for float32/float64 ``x``: ``mask`` is ``factor`` where a uniform float32
    draw is at least ``p``, else 0 (``uniform(x.shape, 0, 1) >= p``, the same draws), in one pass."""
    x = np.ascontiguousarray(x)
    out, mask = np.empty_like(x), np.empty_like(x)
    mt19937.fill_dropout(_state(), x, p, x.dtype.type(factor), out, mask)
    return out, mask


def normal(shape, mean: float, std: float, dtype=np.float32) -> np.ndarray:
    out = np.empty(tuple(shape), _draw_dtype(dtype))
    mt19937.fill_normal(_state(), out, mean, std)
    return out.astype(dtype, copy=False)


def integers(shape, low: int, high: int, dtype=np.int64) -> np.ndarray:
    """Uniform integers in [low, high)."""
    out = np.empty(tuple(shape), np.int64)
    mt19937.fill_integers(_state(), out, int(low), int(high))
    return out.astype(dtype, copy=False)


def remainders(shape, low: int, span: int, wide: bool, dtype=np.int64) -> np.ndarray:
    """``low + draw % span`` per element, as Paddle's ``random_`` draws (``mt19937.fill_remainders``)."""
    out = np.empty(tuple(shape), np.int64)
    mt19937.fill_remainders(_state(), out, int(low), int(span), bool(wide))
    return out.astype(dtype, copy=False)


def permutation(n: int, dtype=np.int64) -> np.ndarray:
    values = np.arange(int(n), dtype=np.int64)
    mt19937.shuffle(_state(), values)
    return values.astype(dtype, copy=False)


def truncated_normal(shape, mean: float, std: float, a: float, b: float, dtype=np.float32) -> np.ndarray:
    """Paddle's truncated_gaussian_random: a uniform draw mapped through the normal's inverse CDF
    between Phi(a) and Phi(b) (a, b absolute bounds), then clamped to [a, b]."""
    dist = NormalDist(mean, std)
    lo, hi = dist.cdf(a), dist.cdf(b)
    u = uniform(shape, float(np.finfo(np.float32).tiny), 1.0, dtype).astype(np.float64)
    values = np.vectorize(dist.inv_cdf, otypes=[np.float64])(np.clip(lo + (hi - lo) * u, 1e-300, 1 - 1e-16))
    return np.clip(values, a, b).astype(dtype)
