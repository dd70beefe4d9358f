"""Paddle's static mode: a script that builds a Program with ``paddle.enable_static()``, trains it
with ``Executor.run`` and fetches predictions gives real Paddle 3.3.1's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError

RNG = np.random.default_rng(0)
XS = RNG.standard_normal((5, 4)).astype("float32")
YS = RNG.standard_normal((5, 1)).astype("float32")


def _train_script(p, optimizer: str) -> tuple[list[float], np.ndarray]:
    p.enable_static()
    try:
        main, startup = p.static.Program(), p.static.Program()
        with p.static.program_guard(main, startup):
            p.seed(1)
            x = p.static.data(name="x", shape=[None, 4], dtype="float32")
            label = p.static.data(name="label", shape=[None, 1], dtype="float32")
            hidden = p.static.nn.fc(x, 8, activation="relu")
            y = p.static.nn.fc(hidden, 1)
            loss = p.mean(p.nn.functional.square_error_cost(y, label))
            opt = getattr(p.optimizer, optimizer)(learning_rate=0.1)
            opt.minimize(loss)
        exe = p.static.Executor(p.CPUPlace())
        exe.run(startup)
        losses = [float(exe.run(main, feed={"x": XS, "label": YS}, fetch_list=[loss])[0]) for _ in range(3)]
        (prediction,) = exe.run(main, feed={"x": XS[:2], "label": YS[:2]}, fetch_list=[y])
        return losses, prediction
    finally:
        p.disable_static()


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_static_training_equals_paddles(real_paddle, optimizer):
    want_losses, want_pred = _train_script(real_paddle, optimizer)
    got_losses, got_pred = _train_script(paddle, optimizer)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    np.testing.assert_allclose(got_pred, want_pred, rtol=1e-5, atol=1e-6)
    assert paddle.in_dynamic_mode()


def test_an_inference_program_needs_only_the_feeds_its_fetches_read():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [None, 3], "float32")
            paddle.static.data("unused", [2], "int64")
            y = paddle.nn.functional.relu(x) * 2.0
        exe = paddle.static.Executor()
        (out,) = exe.run(main, feed={"x": np.array([[-1.0, 0.5, 2.0]], "float32")}, fetch_list=[y])
        np.testing.assert_array_equal(out, [[0.0, 1.0, 4.0]])
        (out,) = exe.run(main, feed={"x": np.ones((4, 3), "float32")}, fetch_list=[y])  # another batch size
        assert out.shape == (4, 3)
        with pytest.raises(ConfigError, match="feed lacks \\['x'\\]"):
            exe.run(main, feed={}, fetch_list=[y])
        with pytest.raises(ConfigError, match="not a variable of this program"):
            exe.run(main, feed={"x": np.ones((1, 3), "float32")}, fetch_list=["nope"])
        with paddle.static.program_guard(main):  # a name given again feeds the newer input
            z = paddle.static.data("x", [2], "float32") + 1.0
        (out,) = exe.run(main, feed={"x": np.zeros(2, "float32")}, fetch_list=[z])
        np.testing.assert_array_equal(out, [1.0, 1.0])
    finally:
        paddle.disable_static()


def test_static_data_outside_static_mode_says_how():
    with pytest.raises(ConfigError, match="enable_static"):
        paddle.static.data("x", [1], "float32")
