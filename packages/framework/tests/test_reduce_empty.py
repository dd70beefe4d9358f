"""Reductions over axes with no elements: the extrema refuse with a typed error (Paddle refuses max/min
and returns uninitialised memory for amax/argmax), logsumexp gives -inf as Paddle does."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ShapeError

EMPTY = np.zeros((0, 3), np.float32)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "argmax", "argmin"])
def test_an_extremum_over_no_elements_is_a_shape_error_naming_the_axis(name):
    with pytest.raises(ShapeError, match=r"\[0, 3\] over axis 0, which has no elements"):
        getattr(paddle, name)(paddle.to_tensor(EMPTY), axis=0)


def test_an_extremum_over_a_non_empty_axis_of_an_empty_input_is_empty():
    assert paddle.max(paddle.to_tensor(EMPTY), axis=1).shape == [0]


def test_logsumexp_over_no_elements_matches_paddle(real_paddle):
    ours = paddle.logsumexp(paddle.to_tensor(EMPTY), axis=0).numpy()
    theirs = real_paddle.logsumexp(real_paddle.to_tensor(EMPTY), axis=0).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert ours.dtype == theirs.dtype and np.all(np.isneginf(ours))
