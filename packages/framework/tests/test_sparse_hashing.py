"""Categorical hashing into buckets: Paddle's ``hash`` op values (XXH64 of each row's bytes, seed i,
mod hash_size), and a string helper stable across processes."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DTypeError, ShapeError
from paddlectl.framework.ops.hashing import hash as bucket
from paddlectl.framework.ops.hashing import hash_strings

SPEC_VECTORS = {b"": 0xEF46DB3751D8E999, b"abc": 0x44BC2CF5AD770999}  # XXH64, seed 0 (xxHash's own)


def test_strings_hash_to_the_xxh64_specification_values():
    top = (1 << 63) - 1
    got = hash_strings(list(SPEC_VECTORS), top).numpy().reshape(-1)
    np.testing.assert_array_equal(got, [v % top for v in SPEC_VECTORS.values()])


def test_an_int64_row_hashes_as_its_bytes():
    values = np.array([[7], [-3], [1 << 50]], dtype="int64")
    rows = hash_strings([v.tobytes() for v in values], 977, num_hash=2).numpy()
    np.testing.assert_array_equal(rows, bucket(paddle.to_tensor(values), 977, num_hash=2).numpy())


@pytest.mark.parametrize(("dtype", "width"), [("int64", 1), ("int64", 2), ("int64", 5), ("int32", 3), ("int32", 9)])
def test_hash_matches_paddle(real_paddle, dtype, width):
    """Widths of 8 to 72 bytes cover XXH64's short path and its 32-byte stripes."""
    values = np.random.default_rng(width).integers(-(1 << 31), 1 << 31, (6, width)).astype(dtype)
    theirs = real_paddle._legacy_C_ops.hash(real_paddle.to_tensor(values), "num_hash", 3, "mod_by", 10007)
    ours = bucket(paddle.to_tensor(values), 10007, num_hash=3)
    assert ours.shape == [6, 3, 1] and ours.dtype == np.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_string_buckets_are_fixed_numbers():
    """The same in every process and on every machine (Python's str hash is salted per process, so
    a helper built on it could not give these pinned values run after run)."""
    words = ["Private", "Self-emp-not-inc", "État", "", "Never-worked"]
    got = hash_strings(words, 1000, num_hash=2).numpy()[:, :, 0].tolist()
    assert got == [[156, 631], [45, 958], [355, 7], [921, 875], [138, 532]]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: bucket(paddle.to_tensor([[1.5]]), 10), DTypeError),
        (lambda: bucket(paddle.to_tensor([1, 2]), 10), ShapeError),
        (lambda: bucket(paddle.to_tensor([[1]]), 0), ConfigError),
        (lambda: bucket(paddle.to_tensor([[1]]), 10, num_hash=True), ConfigError),
        (lambda: hash_strings("abc", 10), ConfigError),
        (lambda: hash_strings(["a", 3], 10), DTypeError),
    ],
)
def test_bad_input_is_refused_with_the_fix(call, error):
    with pytest.raises(error):
        call()
