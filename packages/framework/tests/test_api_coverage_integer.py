"""Paddle's integer functions (bitwise xor/not/invert, the shifts, gcd, lcm) against real Paddle 3.3.1."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError

RNG = np.random.default_rng(30)
A = RNG.integers(-40, 40, (3, 4))
B = RNG.integers(0, 5, (3, 4))


@pytest.mark.parametrize(
    ("fn", "a", "b"),
    [
        (lambda P, x, y: P.bitwise_xor(x, y), A, B),
        (lambda P, x, y: P.bitwise_left_shift(x, y), A, B),
        (lambda P, x, y: P.bitwise_right_shift(x, y), A, B),
        (lambda P, x, y: P.bitwise_right_shift(x, y, is_arithmetic=False), A.astype(np.int8), B.astype(np.int8)),
        (lambda P, x, y: P.bitwise_right_shift(x, y, is_arithmetic=False), A, B),
        (lambda P, x, y: x.gcd(y), A, B - 2),
        (lambda P, x, y: P.lcm(x, y), A, B - 2),
        (lambda P, x, y: x.bitwise_not() + P.bitwise_invert(y), A, B),
    ],
)
def test_integer_functions_match_paddle(real_paddle, fn, a, b):
    compare(real_paddle, lambda P: lambda x, y: fn(P, x, y), a, b)


def test_logical_right_shift_fills_zeros():
    """-1 >> 1 read as unsigned is the largest positive number of the width: zeros come in at the top."""
    out = ours.bitwise_right_shift(ours.to_tensor([-1], dtype="int16"), ours.to_tensor([1], dtype="int16"), False)
    assert out.numpy().tolist() == [32767]


def test_float_input_is_refused_with_the_fix():
    with pytest.raises(DTypeError, match="cast to an integer type"):
        ours.gcd(ours.to_tensor([1.5]), ours.to_tensor([2.0]))
