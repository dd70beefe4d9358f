"""Paddle's CPU random engine, bit for bit: ``std::mt19937_64`` seeded through ``std::seed_seq``,
and libstdc++'s distributions over it (``generate_canonical``, the polar normal, Lemire's bounded
integers, ``std::shuffle``), so ``paddle.seed(s)`` followed by the same draws gives Paddle's numbers.

The state is one uint64 array: 312 words, then the index of the next word to temper.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from . import njit

_N, _M = 312, 156
STATE_SIZE = _N + 1
_MATRIX_A = np.uint64(0xB5026F5AA96619E9)
_UPPER, _LOWER = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
_TWO64_F32, _TWO64_F64 = np.float32(2.0**64), 2.0**64
_ONE_BELOW_F32 = np.nextafter(np.float32(1), np.float32(0))
_ONE_BELOW_F64 = np.nextafter(1.0, 0.0)


def seeded_state(seed: int) -> np.ndarray:
    """``engine.seed(std::seed_seq({seed}))``: seed_seq keeps the low 32 bits of the seed and
    spreads them over 624 32-bit words, paired into the 312 64-bit words of the state."""
    words = _seed_seq_generate(int(seed) & 0xFFFFFFFF, 2 * _N)
    state = np.empty(_N + 1, np.uint64)
    state[:_N] = words[0::2].astype(np.uint64) | (words[1::2].astype(np.uint64) << np.uint64(32))
    if not (state[0] & _UPPER) and not state[1:_N].any():
        state[0] = np.uint64(1) << np.uint64(63)
    state[_N] = _N
    return state


def direct_state(seed: int) -> np.ndarray:
    """``engine.seed(seed)`` (no seed_seq): what Paddle's kernels use for an op-level ``seed`` attribute."""
    state = np.empty(_N + 1, np.uint64)
    word = int(seed) & 0xFFFFFFFFFFFFFFFF
    for i in range(_N):
        state[i] = word
        word = (6364136223846793005 * (word ^ (word >> 62)) + i + 1) & 0xFFFFFFFFFFFFFFFF
    state[_N] = _N
    return state


@njit(cache=True)
def _seed_seq_generate(value, n):
    """``std::seed_seq({value}).generate`` over n words; int64 arithmetic masked to 32 bits (Numba
    widens uint32 operations, so every wrap is explicit)."""
    mask = 0xFFFFFFFF
    words = np.full(n, 0x8B8B8B8B, np.int64)
    t = 11 if n >= 623 else 7 if n >= 68 else 5 if n >= 39 else 3 if n >= 7 else (n - 1) // 2
    p = (n - t) // 2
    q = p + t
    m = max(2, n)
    for k in range(m):
        x = words[k % n] ^ words[(k + p) % n] ^ words[(k - 1) % n]
        r1 = (1664525 * (x ^ (x >> 27))) & mask
        r2 = (r1 + (1 if k == 0 else (k % n + value if k == 1 else k % n))) & mask
        words[(k + p) % n] = (words[(k + p) % n] + r1) & mask
        words[(k + q) % n] = (words[(k + q) % n] + r2) & mask
        words[k % n] = r2
    for k in range(m, m + n):
        x = (words[k % n] + words[(k + p) % n] + words[(k - 1) % n]) & mask
        r3 = (1566083941 * (x ^ (x >> 27))) & mask
        r4 = (r3 - k % n) & mask
        words[(k + p) % n] ^= r3
        words[(k + q) % n] ^= r4
        words[k % n] = r4
    return words


@njit(cache=True, inline="always")
def _twist(state):
    """The next 312 words: word k from words k, k + 1 and k + 156 (mod 312), in the three runs where
    no index wraps, as libstdc++ writes it (a modulo per word cost a third of every draw)."""
    one, zero = np.uint64(1), np.uint64(0)
    for k in range(_N - _M):
        y = (state[k] & _UPPER) | (state[k + 1] & _LOWER)
        state[k] = state[k + _M] ^ (y >> one) ^ (_MATRIX_A if y & one else zero)
    for k in range(_N - _M, _N - 1):
        y = (state[k] & _UPPER) | (state[k + 1] & _LOWER)
        state[k] = state[k + _M - _N] ^ (y >> one) ^ (_MATRIX_A if y & one else zero)
    y = (state[_N - 1] & _UPPER) | (state[0] & _LOWER)
    state[_N - 1] = state[_M - 1] ^ (y >> one) ^ (_MATRIX_A if y & one else zero)


@njit(cache=True, inline="always")
def _temper(x):
    x ^= (x >> np.uint64(29)) & np.uint64(0x5555555555555555)
    x ^= (x << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
    x ^= (x << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
    return x ^ (x >> np.uint64(43))


@njit(cache=True, inline="always")
def next_u64(state):
    i = np.int64(state[_N])
    if i >= _N:
        _twist(state)
        i = 0
    state[_N] = np.uint64(i + 1)
    return _temper(state[i])


@njit(cache=True, inline="always")
def _unit32(draw):
    """``generate_canonical<float, 24>`` of one draw: scaled in float; 1.0 becomes the float below."""
    v = np.float32(draw) / _TWO64_F32
    return _ONE_BELOW_F32 if v >= np.float32(1) else v


@njit(cache=True, inline="always")
def _unit64(draw):
    v = np.float64(draw) / _TWO64_F64
    return _ONE_BELOW_F64 if v >= 1.0 else v


def unit(draw, like):
    """A draw as a value in [0, 1) in the precision of ``like`` (float32 or float64): compiled per type below."""


@overload(unit, inline="always")  # inlined into the fill loops: a call per draw cost as much
def _unit_for(draw, like):
    if like == types.float32:
        return lambda draw, like: _unit32(draw)
    return lambda draw, like: _unit64(draw)


@njit(cache=True, inline="always")
def canonical(state, like):
    """The next draw in [0, 1) in the precision of ``like``."""
    return unit(next_u64(state), like)


@njit(cache=True, inline="always")
def _take_words(state, wanted):
    """The next run of untempered words (at most ``wanted``, up to the next twist, twisting first
    where none are left), marked used: a fill loop tempers a run without the twist check in it,
    which lets it vectorise (1M float32 draws 2.4 -> 0.6 ms)."""
    i = np.int64(state[_N])
    if i >= _N:
        _twist(state)
        i = 0
    run = min(_N - i, wanted)
    state[_N] = np.uint64(i + run)
    return state[i : i + run]


@njit(cache=True)
def fill_uniform(state, out, low, high):
    """``uniform_real_distribution<T>(low, high)`` for T = out's dtype (float32 or float64), a run of
    the state's words at a time (``_take_words``)."""
    flat = out.ravel()
    lo, hi = flat.dtype.type(low), flat.dtype.type(high)
    done = 0
    while done < flat.size:
        words = _take_words(state, flat.size - done)
        dst = flat[done : done + words.size]
        for j in range(words.size):
            dst[j] = (hi - lo) * unit(_temper(words[j]), lo) + lo
        done += words.size


@njit(cache=True)
def fill_dropout(state, x, p, factor, out, mask):
    """Dropout in one pass: ``mask = factor`` where the element's uniform draw in [0, 1) (float32, the
    words ``fill_uniform`` would use) is at least ``p``, else 0, and ``out = x * mask``, for
    C-contiguous ``x``, ``out`` and ``mask`` of one float dtype. Drawing, comparing, casting and
    scaling the mask and the product were five array passes (a [16, 64, 1024] mask: 2.4 ms)."""
    src, dst, keep = x.ravel(), out.ravel(), mask.ravel()
    threshold, zero = np.float32(p), dst.dtype.type(0)
    done = 0
    while done < src.size:
        words = _take_words(state, src.size - done)
        run = words.size
        values, products, masks = src[done : done + run], dst[done : done + run], keep[done : done + run]
        for j in range(run):
            m = factor if _unit32(_temper(words[j])) >= threshold else zero
            masks[j] = m
            products[j] = values[j] * m
        done += run


@njit(cache=True)
def fill_normal(state, out, mean, std):
    """``normal_distribution<T>(mean, std)``: Marsaglia's polar method, the second value of each pair
    kept for the next element (one distribution object per kernel call, as Paddle's kernel has)."""
    flat = out.ravel()
    t = flat.dtype.type
    mu, sigma, one, two = t(mean), t(std), t(1), t(2)
    saved, have_saved = t(0), False
    for i in range(flat.size):
        if have_saved:
            value, have_saved = saved, False
        else:
            while True:
                x = two * canonical(state, one) - one
                y = two * canonical(state, one) - one
                r2 = x * x + y * y
                if r2 <= one and r2 != t(0):
                    break
            mult = np.sqrt(t(-2) * np.log(r2) / r2)
            saved, have_saved = x * mult, True
            value = y * mult
        flat[i] = value * sigma + mu


@njit(cache=True, inline="always")
def _mul_hi_lo(a, b):
    """The 128-bit product of two uint64 as (high, low) words."""
    mask = np.uint64(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & mask, a >> np.uint64(32), b & mask, b >> np.uint64(32)
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & mask) + lo_hi
    high = hi_hi + (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32))
    return high, (cross << np.uint64(32)) | (lo_lo & mask)


@njit(cache=True, inline="always")
def bounded(state, span):
    """``uniform_int_distribution`` over [0, span) for a 64-bit engine: Lemire's multiply with
    rejection, as libstdc++ does with a 128-bit product."""
    span = np.uint64(span)
    high, low = _mul_hi_lo(next_u64(state), span)
    if low < span:
        threshold = (np.uint64(0) - span) % span
        while low < threshold:
            high, low = _mul_hi_lo(next_u64(state), span)
    return high


@njit(cache=True)
def fill_remainders(state, out, low, span, wide):
    """Paddle's ``random_`` kernel: ``low + draw % span``, the draw the engine's low 32 bits, or all
    64 when ``wide`` (a span of 2^32 or more, or the dtype's whole range)."""
    flat = out.ravel()
    span = np.uint64(span)
    for i in range(flat.size):
        draw = next_u64(state)
        if not wide:
            draw &= np.uint64(0xFFFFFFFF)
        flat[i] = low + np.int64(draw % span)


@njit(cache=True)
def fill_integers(state, out, low, high):
    """``uniform_int_distribution<T>(low, high - 1)`` into an integer array."""
    flat = out.ravel()
    span = np.uint64(high - low)
    for i in range(flat.size):
        flat[i] = low + np.int64(bounded(state, span))


@njit(cache=True)
def shuffle(state, values):
    """``std::shuffle`` as libstdc++ writes it for a 64-bit engine: where the engine's range allows,
    one bounded draw picks the swap positions of two successive elements."""
    n = values.size
    if n < 2:
        return
    i = 1
    if n % 2 == 0:
        j = bounded(state, 2)
        values[1], values[j] = values[j], values[1]
        i = 2
    while i < n:
        span = np.uint64(i + 1)
        x = bounded(state, span * (span + np.uint64(1)))
        a, b = x // (span + np.uint64(1)), x % (span + np.uint64(1))
        values[i], values[a] = values[a], values[i]
        values[i + 1], values[b] = values[b], values[i + 1]
        i += 2
