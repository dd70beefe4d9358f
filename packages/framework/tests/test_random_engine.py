"""``paddle.seed(s)`` then the same draws gives Paddle's numbers, bit for bit (Paddle's CPU engine
and libstdc++'s distributions, kernels/mt19937.py), checked against real Paddle 3.3.1."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError
from paddlectl.framework.kernels import mt19937

DRAWS = {
    "rand": lambda p: p.rand([5]),
    "rand64": lambda p: p.rand([3], dtype="float64"),
    "randn": lambda p: p.randn([2, 3]),
    "randn64": lambda p: p.randn([5], dtype="float64"),
    "standard_normal": lambda p: p.standard_normal([4]),
    "normal": lambda p: p.normal(1.0, 2.0, [3]),
    "normal_tensor_mean": lambda p: p.normal(p.to_tensor([1.0, 2.0, 3.0]), 0.5),
    "uniform": lambda p: p.uniform([4], min=-2, max=3),
    "uniform_op_seed": lambda p: p.concat([p.uniform([3], min=-1.0, max=1.0, seed=10), p.rand([2])]),
    "randint": lambda p: p.randint(0, 10, [8]),
    "randint_wide": lambda p: p.randint(-5, 1_000_000, [4], dtype="int32"),
    "randperm_even": lambda p: p.randperm(8),
    "randperm_odd": lambda p: p.randperm(11),
    "bernoulli": lambda p: p.bernoulli(p.full([8], 0.3)),
    "multinomial": lambda p: p.multinomial(p.to_tensor([0.2, 0.3, 0.5]), 5, replacement=True),
    "multinomial_rows": lambda p: p.multinomial(p.to_tensor([[1.0, 2, 3, 4], [1, 1, 1, 1]]), 4),
    "dropout": lambda p: p.nn.functional.dropout(p.ones([10]), 0.4),
    "dropout_axis": lambda p: p.nn.functional.dropout(p.ones([3, 4]), 0.5, axis=1),
    "stream_continues": lambda p: p.concat([p.rand([2]), p.randn([3]), p.rand([2])]),
    "many_twists": lambda p: p.concat(
        [p.rand([1500]), p.randn([700]), p.rand([1000], dtype="float64").astype("float32")]
    ),
    "dropout_many_twists": lambda p: p.nn.functional.dropout(p.ones([40, 50]), 0.3),
    "linear": lambda p: p.nn.Linear(3, 2).weight,
    "conv2d": lambda p: p.nn.Conv2D(2, 3, 3).weight,
    "embedding": lambda p: p.nn.Embedding(4, 3).weight,
    "lstm": lambda p: p.nn.LSTM(3, 2).weight_ih_l0,
    "truncated_normal": lambda p: p.create_parameter(
        [5], "float32", default_initializer=p.nn.initializer.TruncatedNormal(1.0, 2.0, -1.0, 2.5)
    ),
    "xavier_normal": lambda p: p.create_parameter(
        [3, 4], "float32", default_initializer=p.nn.initializer.XavierNormal()
    ),
    "kaiming_uniform": lambda p: p.create_parameter(
        [4, 2, 3], "float32", default_initializer=p.nn.initializer.KaimingUniform()
    ),
}


@pytest.mark.parametrize("name", list(DRAWS))
def test_seeded_draws_equal_paddles(real_paddle, name):
    real_paddle.seed(2024)
    expected = DRAWS[name](real_paddle).numpy()
    paddle.seed(2024)
    got = DRAWS[name](paddle).numpy()
    assert got.dtype == expected.dtype
    # the truncated normal's inverse CDF is computed in double here, in float there: an ulp apart
    np.testing.assert_allclose(got, expected, rtol=2e-6 if name == "truncated_normal" else 0, atol=0)


def test_rng_state_round_trip_and_hostile_states():
    paddle.seed(3)
    state = paddle.get_rng_state()
    first = paddle.rand([4]).numpy()
    paddle.set_rng_state(state)
    np.testing.assert_array_equal(paddle.rand([4]).numpy(), first)
    for bad in ({}, {"engine": [1, 2]}, {**state, "engine": [-1] * 313}, {**state, "numpy": {"x": 1}}):
        with pytest.raises(DataError, match="random state"):
            paddle.set_rng_state(bad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniform_fills_by_runs_equal_one_draw_at_a_time(dtype):
    """``fill_uniform`` draws a run of the state's words between twists; the values and the state after
    equal drawing one at a time, for sizes that end inside, on and across the 312-word boundaries."""
    runs, single = mt19937.seeded_state(7), mt19937.seeded_state(7)
    for size in (1, 310, 1, 1, 312, 700, 0, 5):
        out = np.empty(size, dtype)
        mt19937.fill_uniform(runs, out, -2.0, 3.0)
        want = [(dtype(3.0) - dtype(-2.0)) * mt19937.canonical(single, dtype(0)) + dtype(-2.0) for _ in range(size)]
        np.testing.assert_array_equal(out, np.array(want, dtype))
        np.testing.assert_array_equal(runs, single)
