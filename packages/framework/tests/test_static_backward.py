"""paddle.static.append_backward / gradients (recorded into the program, fetched by Executor.run)
and paddle.grad's no_grad_vars, against real Paddle and the eager tape."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework import static
from paddlectl.framework.errors import ConfigError


def test_grad_no_grad_vars_blocks_the_flow_like_paddle(real_paddle):
    found = []
    for mod in (paddle, real_paddle):
        x = mod.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
        h, k = x * x, x * 3
        y = (h * k + k).sum()
        found.append([mod.grad(y, x, no_grad_vars=v, retain_graph=True)[0].numpy() for v in ([h], [k], h, [])])
    for got, expected in zip(*found, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_append_backward_records_fetchable_gradients():
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            x = static.data(name="x", shape=[None, 3], dtype="int64")
            y = static.data(name="y", shape=[None, 1], dtype="float32")
            emb = static.nn.embedding(x, size=[10, 4])
            pred = static.nn.fc(emb, size=1, name="my_fc")
            loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
            pairs = static.append_backward(loss)
            weights = [p for p in main.all_parameters() if "w_" in p.name]
            assert [p.name for p, _ in static.append_backward(loss, parameter_list=[w.name for w in weights])] == [
                w.name for w in weights
            ]
            blocked = static.append_backward(loss, no_grad_set={emb})  # nothing reaches the table
            assert weights[0].name not in [p.name for p, _ in blocked]
            assert static.append_backward(loss, parameter_list=weights, no_grad_set=set(weights)) == []
            (dx,) = static.gradients([loss], [pred])
        feed = {"x": np.array([[1, 2, 3], [4, 5, 6]], "int64"), "y": np.array([[1.0], [2.0]], "float32")}
        fetched = static.Executor().run(main, feed=feed, fetch_list=[g for _, g in pairs] + [dx])
    finally:
        paddle.disable_static()
    assert all(g.name.endswith("@GRAD") for _, g in pairs)
    # the same gradients on the eager tape
    table, fc = (p for p, _ in pairs[:2])
    xs, ys = paddle.to_tensor(feed["x"]), paddle.to_tensor(feed["y"])
    out = paddle.matmul(paddle.nn.functional.embedding(xs, table).reshape([2, -1]), fc) + pairs[2][0]
    eager = paddle.grad(paddle.mean((out - ys) ** 2), [table, fc, pairs[2][0]])
    for got, expected in zip(fetched[:3], eager, strict=True):
        np.testing.assert_allclose(got, expected.numpy(), rtol=1e-5, atol=1e-7)
    assert fetched[3].shape == (2, 1)


def test_append_backward_needs_static_mode():
    with pytest.raises(ConfigError):
        static.append_backward(paddle.ones([1]))


def test_static_pylayer_gradient_follows_the_fed_batch():
    """The backward's output gradient is an op of the output's shape, so a program recorded at the
    example batch size serves another (Paddle's static_pylayer example: dx = 2 * exp(dy))."""
    main, startup = static.Program(), static.Program()
    paddle.enable_static()
    try:
        with static.program_guard(main, startup):
            data = static.data(name="X", shape=[None, 5], dtype="float32")
            data.stop_gradient = False
            ret = static.nn.static_pylayer(paddle.exp, [data], lambda dy: 2 * paddle.exp(dy))
            (grad,) = static.gradients([ret], data)
            plain = static.nn.static_pylayer(paddle.tanh, [data])  # no backward_fn: the ops' own
            (plain_grad,) = static.gradients([plain], data)
        x = np.arange(1.0, 11.0, dtype="float32").reshape(2, 5) / 10
        y, dx, dplain = static.Executor().run(main, feed={"X": x}, fetch_list=[ret, grad, plain_grad])
    finally:
        paddle.disable_static()
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(dx, np.full((2, 5), 2 * np.e, "float32"), rtol=1e-6)
    np.testing.assert_allclose(dplain, 1 - np.tanh(x) ** 2, rtol=1e-5)
