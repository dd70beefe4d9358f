"""``sum`` over axes that are not the last takes an einsum path: the same floats as NumPy's sum, bit
for bit, and Paddle's within float32 rounding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paddlectl.framework as paddle
from paddlectl.framework.ops.reduce import _outer_sum_applies


@st.composite
def _case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=2, max_size=4)))
    axes = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    seed = draw(st.integers(0, 2**31 - 1))
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 1e3, tuple(axes), draw(st.booleans())


@settings(max_examples=200, deadline=None)
@given(_case())
def test_sum_equals_numpy_bit_for_bit(case):
    x, axes, keepdim = case
    ours = paddle.sum(paddle.to_tensor(x), axis=list(axes), keepdim=keepdim).numpy()
    expected = np.sum(x, axis=axes, keepdims=keepdim)
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    np.testing.assert_array_equal(ours, expected)


@pytest.mark.parametrize(("shape", "axis"), [((512, 9, 16), 1), ((64, 7, 5), 0), ((4, 300, 3), (0, 1))])
def test_the_einsum_path_equals_numpy_on_large_inputs(shape, axis):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    assert _outer_sum_applies(x, (axis,) if isinstance(axis, int) else axis)
    np.testing.assert_array_equal(paddle.sum(paddle.to_tensor(x), axis=axis).numpy(), np.sum(x, axis=axis))


def test_sum_and_its_gradient_match_paddle(real_paddle):
    x = np.random.default_rng(1).standard_normal((32, 9, 16)).astype(np.float32)
    weights = np.random.default_rng(2).standard_normal((32, 16)).astype(np.float32)
    ours_x, theirs_x = paddle.to_tensor(x, stop_gradient=False), real_paddle.to_tensor(x, stop_gradient=False)
    ours = paddle.sum(ours_x, axis=1)
    theirs = real_paddle.sum(theirs_x, axis=1)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-5)
    (ours * paddle.to_tensor(weights)).sum().backward()
    (theirs * real_paddle.to_tensor(weights)).sum().backward()
    np.testing.assert_array_equal(ours_x.grad.numpy(), theirs_x.grad.numpy())
