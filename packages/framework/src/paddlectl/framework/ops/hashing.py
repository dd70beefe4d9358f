"""Hashing raw categorical values into buckets, as Paddle's ``hash`` op (``fluid.layers.hash``; in
Paddle 3.3 only ``_legacy_C_ops.hash``): each row of an integer tensor, as its bytes, through
XXH64 with seed ``i`` for ``i < num_hash``, modulo ``hash_size``. ``hash_strings`` does the same
for raw strings (their UTF-8 bytes), so bucket ids are stable across processes and machines,
which Python's salted ``hash()`` is not."""

from __future__ import annotations

import numpy as np

from ..core.op import OPAQUE, OpDef, Sample, Spec
from ..core.tensor import Tensor
from ..errors import ConfigError, DTypeError, ShapeError
from ..kernels import njit
from .creation import to_tensor

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)


@njit(cache=True)
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@njit(cache=True)
def _lane(data, at, width):
    """``width`` bytes of ``data`` from ``at`` as a little-endian unsigned integer."""
    out = np.uint64(0)
    for k in range(width):
        out |= np.uint64(data[at + k]) << np.uint64(8 * k)
    return out


@njit(cache=True)
def _round(acc, lane):
    return _rotl(acc + lane * _P2, 31) * _P1


@njit(cache=True)
def _xxh64(data, start, length, seed):
    """XXH64 of ``data[start:start + length]`` (uint8), per the xxHash specification."""
    at, end = start, start + length
    if length >= 32:
        v1, v2, v3, v4 = seed + _P1 + _P2, seed + _P2, seed, seed - _P1
        while at + 32 <= end:
            v1 = _round(v1, _lane(data, at, 8))
            v2 = _round(v2, _lane(data, at + 8, 8))
            v3 = _round(v3, _lane(data, at + 16, 8))
            v4 = _round(v4, _lane(data, at + 24, 8))
            at += 32
        acc = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        for v in (v1, v2, v3, v4):
            acc = (acc ^ _round(np.uint64(0), v)) * _P1 + _P4
    else:
        acc = seed + _P5
    acc += np.uint64(length)
    while at + 8 <= end:
        acc = _rotl(acc ^ _round(np.uint64(0), _lane(data, at, 8)), 27) * _P1 + _P4
        at += 8
    if at + 4 <= end:
        acc = _rotl(acc ^ (_lane(data, at, 4) * _P1), 23) * _P2 + _P3
        at += 4
    while at < end:
        acc = _rotl(acc ^ (np.uint64(data[at]) * _P5), 11) * _P1
        at += 1
    acc = (acc ^ (acc >> np.uint64(33))) * _P2
    acc = (acc ^ (acc >> np.uint64(29))) * _P3
    return acc ^ (acc >> np.uint64(32))


@njit(cache=True)
def _buckets(data, offsets, num_hash, mod_by):
    """Bucket of item ``i`` (bytes ``data[offsets[i]:offsets[i+1]]``) under seed ``j``: [n, num_hash, 1]."""
    n = offsets.size - 1
    out = np.empty((n, num_hash, 1), dtype=np.int64)
    for i in range(n):
        for j in range(num_hash):
            h = _xxh64(data, offsets[i], offsets[i + 1] - offsets[i], np.uint64(j))
            out[i, j, 0] = np.int64(h % np.uint64(mod_by))
    return out


def _hash_forward(ctx, x, num_hash=1, mod_by=100000):
    if x.dtype.kind not in "iu":
        raise DTypeError(f"hash: input must be an integer tensor (int32/int64), got {x.dtype}")
    if x.ndim != 2:
        raise ShapeError(f"hash: input must be 2-D [N, K] (each row hashed as one value), got shape {list(x.shape)}")
    rows = np.ascontiguousarray(x)
    width = rows.shape[1] * rows.itemsize
    offsets = np.arange(rows.shape[0] + 1, dtype=np.int64) * width
    return _buckets(rows.view(np.uint8).reshape(-1), offsets, num_hash, mod_by)


hash_op = OpDef(
    "hash",
    _hash_forward,
    None,
    lambda x, num_hash=1, mod_by=100000: Spec((x.shape[0], num_hash, 1), np.dtype(np.int64)),
    OPAQUE,
    samples=lambda rng: [Sample((rng.integers(0, 1 << 40, (5, 2)),), {"num_hash": 3, "mod_by": 1000})],
)
"""Paddle's ``hash``: an integer-valued lookup key, so it has no gradient."""


def _check_sizes(hash_size, num_hash) -> None:
    for label, value in (("hash_size", hash_size), ("num_hash", num_hash)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
            raise ConfigError(f"hash: {label} must be a positive int, got {value!r}")


def hash(input, hash_size: int, num_hash: int = 1, name=None):  # noqa: A001 - Paddle's name
    """Bucket ids [N, num_hash, 1] (int64) of the rows of a 2-D integer tensor, Paddle's values."""
    _check_sizes(hash_size, num_hash)
    return hash_op(input, num_hash=int(num_hash), mod_by=int(hash_size))


def hash_strings(values, hash_size: int, num_hash: int = 1) -> Tensor:
    """Bucket ids [N, num_hash, 1] (int64) of raw categorical strings, by their UTF-8 bytes: the
    same value lands in the same bucket in every process (a column of words, zip codes, ...)."""
    _check_sizes(hash_size, num_hash)
    if isinstance(values, str | bytes):
        raise ConfigError("hash_strings: pass a list of strings (one per example), not a single string")
    encoded = []
    for v in values:
        if not isinstance(v, str | bytes):
            raise DTypeError(f"hash_strings: values must be str or bytes, got {type(v).__name__} ({v!r})")
        encoded.append(v.encode("utf-8") if isinstance(v, str) else v)
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8) if offsets[-1] else np.zeros(0, np.uint8)
    return to_tensor(_buckets(data, offsets, int(num_hash), int(hash_size)))  # a constant: strings are not traced
