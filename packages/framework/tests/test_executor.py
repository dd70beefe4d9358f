"""The executor: control flow with results freed after their last use, one specialisation per feed
shape (checked once, re-made for a new shape), and lowered ops equal to their ``forward``."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.core.op import REGISTRY
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.jit import InputSpec, to_static
from paddlectl.framework.static import executor as executor_module
from paddlectl.framework.static import parse_program
from paddlectl.framework.static.executor import Executor


def _loop(x, n):
    s = paddle.sum(x)
    y = paddle.static.cond(s > 0, lambda: x * 2.0, lambda: x - 1.0)
    i = paddle.zeros([1], "int64")
    # the body reads x, defined outside the loop: it must survive every iteration
    (i, y) = paddle.static.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * 0.5 + x), [i, y])
    return paddle.reshape(y, [0, -1]) + 1.0


def _eager(x, n):
    y = x * 2.0 if x.sum() > 0 else x - 1.0
    for _ in range(int(n[0])):
        y = y * 0.5 + x
    return y + 1.0


@pytest.mark.parametrize("free_dead", [False, True])
def test_control_flow_runs_with_and_without_freeing(free_dead):
    spec = [InputSpec([None, 3], "float32", "x"), InputSpec([1], "int64", "n")]
    program = to_static(_loop, input_spec=spec).program
    executor = Executor(program, free_dead=free_dead)
    rng = np.random.default_rng(0)
    for rows, sign, n in [(2, 1, 3), (5, -1, 0), (2, -1, 4)]:
        x = (sign * np.abs(rng.standard_normal((rows, 3)))).astype("float32")
        count = np.array([n], "int64")
        np.testing.assert_allclose(executor.run([x, count])[0], _eager(x, count), rtol=1e-6)


def test_each_feed_shape_is_checked_once_and_respecialised():
    text = '%x: f32[N,4] = input "x"\n%1: f32[N,2,2] = reshape(%x) {shape=[0,2,-1]}\n%2: f32[N,2,2] = relu(%1)\nreturn %2\n'
    executor = Executor(parse_program(text, {}))
    for rows in (1, 3, 1, 3):
        x = np.arange(rows * 4, dtype="float32").reshape(rows, 4) - 5
        np.testing.assert_array_equal(executor.run([x])[0], np.maximum(x.reshape(rows, 2, 2), 0))
    assert sorted(executor._specialised) == [(((1, 4), np.dtype("float32")),), (((3, 4), np.dtype("float32")),)]
    # the straight-line run of a new size reuses the text compiled for the first one
    compiled = executor_module._compiled.cache_info()
    executor.run([np.zeros((7, 4), "float32")])
    executor.run([np.zeros((7, 4), "float32")])
    assert executor_module._compiled.cache_info().misses == compiled.misses
    with pytest.raises(DTypeError, match="expected dtype float32"):
        executor.run([np.zeros((1, 4))])
    with pytest.raises(ShapeError, match="expected shape"):
        executor.run([np.zeros((1, 5), "float32")])
    with pytest.raises(ShapeError, match="takes 1 inputs"):
        executor.run([np.zeros((1, 4), "float32")] * 2)


def test_a_lowered_op_equals_its_forward(monkeypatch):
    """A registered lowering is prepared once per feed shape, with the concrete input types."""
    calls = []

    def lower(attrs, in_types, out_types):
        calls.append(in_types)
        return lambda x: np.maximum(x, 0) + 0.0

    monkeypatch.setattr(REGISTRY["relu"], "lower", lower)
    text = '%x: f32[2,N] = input "x"\n%1: f32[2,N] = relu(%x)\nreturn %1\n'
    executor = Executor(parse_program(text, {}))
    x = np.array([[-1.0, 2.0], [3.0, -4.0]], "float32")
    for _ in range(2):
        np.testing.assert_array_equal(executor.run([x])[0], np.maximum(x, 0))
    assert calls == [[((2, 2), np.dtype("float32"))]]


def test_later_runs_go_straight_and_keep_a_mismatched_op_on_its_checked_step(monkeypatch):
    """After the checked first run, runs use the generated straight-line function: lowered ops with
    several results and freed slots give the same results, and an op whose inputs did not match
    its prepared types on the first run (here a lowering that returns the wrong shape feeds it)
    keeps running its ``forward`` there, never its lowering."""
    calls = {"split": 0, "relu": []}

    def lower_split(attrs, in_types, out_types):
        def run(x):
            calls["split"] += 1
            return x[:, :1] + 0.0, x[:, 2:] + 0.0  # wrong: the first part should have 2 columns

        return run

    def lower_relu(attrs, in_types, out_types):
        return lambda x: calls["relu"].append(x.shape) or np.maximum(x, 0)

    monkeypatch.setattr(REGISTRY["split"], "lower", lower_split)
    monkeypatch.setattr(REGISTRY["relu"], "lower", lower_relu)
    text = (
        '%x: f32[N,4] = input "x"\n%0: f32[N,2], %1: f32[N,2] = split(%x) {axis=1, sections=[2,2]}\n'
        "%2: f32[N,2] = relu(%0)\n%3: f32[N,2] = add(%2, %1)\nreturn %3\n"
    )
    x = np.array([[-1.0, 2.0, 3.0, -4.0]], "float32")
    expected = np.maximum(x[:, :1], 0) + x[:, 2:]  # what the wrong split gives, broadcast by add
    for free_dead in (False, True):
        calls.update(split=0, relu=[])
        executor = Executor(parse_program(text, {}), free_dead=free_dead)
        for _ in range(3):
            np.testing.assert_array_equal(executor.run([x])[0], expected)
        assert calls == {"split": 3, "relu": []}
    monkeypatch.setattr(REGISTRY["split"], "lower", None)  # now a generic op with two results, called directly
    executor = Executor(parse_program(text, {}), free_dead=True)
    for _ in range(3):
        np.testing.assert_array_equal(executor.run([x])[0], np.maximum(x[:, :2], 0) + x[:, 2:])
    assert calls["relu"] == [(1, 2)] * 3


POOLS = [
    ("max_pool2d", dict(kernel_size=2, stride=2)),
    ("max_pool2d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool2d", dict(kernel_size=2, stride=3)),  # columns no window reads
    ("max_pool2d", dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 0])),
    ("max_pool2d", dict(kernel_size=2, stride=2, ceil_mode=True)),  # partial last windows
    ("avg_pool2d", dict(kernel_size=3, stride=2, padding=1, exclusive=False)),
    ("adaptive_avg_pool2d", dict(output_size=1)),
    ("max_pool2d", dict(kernel_size=2, stride=2, data_format="NHWC")),
    ("max_pool2d", dict(kernel_size=2, stride=1, padding="SAME")),  # PP-HGNetV2's stem: its own kernel
    ("max_pool2d", dict(kernel_size=2, stride=1, padding=[0, 1, 0, 1])),
]


@pytest.mark.parametrize(("name", "kwargs"), POOLS)
def test_lowered_pooling_equals_eager(name, kwargs):
    """Pooling runs its per-shape lowering in the executor (NHWC keeps ``forward``): same results."""
    pool = getattr(paddle.nn.functional, name)
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype("float32")
    static = to_static(lambda t: pool(t, **kwargs), input_spec=[InputSpec([None, 3, 7, 9], "float32", "x")])
    for _ in range(2):  # the first run specialises, the second runs the prepared callable
        np.testing.assert_array_equal(static(paddle.to_tensor(x)).numpy(), pool(paddle.to_tensor(x), **kwargs).numpy())
    assert REGISTRY["max_pool2d"].lower and REGISTRY["avg_pool2d"].lower


@pytest.mark.parametrize("shape", [(3, 7, 9), (2, 1, 5), (2, 4, 1), (1, 1, 1)])
def test_the_same_padded_2x2_pooling_kernel_equals_the_general_one_nans_included(shape):
    from paddlectl.framework.kernels.pool import max_pool_values, max_pool_values_2x2_same

    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    x.flat[:: max(1, x.size // 5)] = np.nan  # in first rows/columns and elsewhere: which one wins is the rule
    expected = max_pool_values(x, shape[1], shape[2], 2, 2, 1, 1, 0, 0)
    np.testing.assert_array_equal(max_pool_values_2x2_same(x), expected)


CONVS = [
    dict(in_channels=4, out_channels=4, kernel_size=3, padding=1, groups=4),  # depthwise
    dict(in_channels=4, out_channels=6, kernel_size=1),  # pointwise
    dict(in_channels=4, out_channels=6, kernel_size=3, padding=1),  # small image: shifted GEMMs
    dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1),  # columns
    dict(in_channels=4, out_channels=6, kernel_size=3, padding=1, data_format="NHWC"),  # forward
]


@pytest.mark.parametrize("kwargs", CONVS)
def test_lowered_conv_equals_eager(kwargs):
    paddle.seed(0)
    conv = paddle.nn.Conv2D(**kwargs)
    shape = [2, 7, 9, 4] if kwargs.get("data_format") == "NHWC" else [2, 4, 7, 9]
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))
    static = to_static(conv, input_spec=[InputSpec([None, *shape[1:]], "float32", "x")])
    for _ in range(2):
        np.testing.assert_allclose(static(x).numpy(), conv(x).numpy(), rtol=1e-6, atol=1e-6)
    assert REGISTRY["conv2d"].lower is not None


def test_planning_leaves_the_cycle_collector_as_it_found_it():
    import gc

    text = '%x: f32[N,4] = input "x"\n%1: f32[N,4] = relu(%x)\nreturn %1\n'
    executor = Executor(parse_program(text, {}))
    was = gc.isenabled()
    try:
        for enabled, rows in ((True, 1), (False, 2), (True, 3)):
            gc.enable() if enabled else gc.disable()
            executor.run([np.ones((rows, 4), "float32")])  # plans (collector paused)
            executor.run([np.ones((rows, 4), "float32")])  # builds the straight line (paused too)
            assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
