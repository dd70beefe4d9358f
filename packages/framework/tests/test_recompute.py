"""fleet.utils.recompute: gradients equal a plain run's (dropout included), activation memory goes down."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.distributed.fleet.utils.recompute import recompute
from paddlectl.framework.errors import ConfigError

nn = paddle.nn


def _blocks(width=64, n=4):
    paddle.seed(3)
    return [
        nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Dropout(0.2), nn.Linear(width, width)) for _ in range(n)
    ]


def _step(blocks, x, use_recompute, peak=False):
    paddle.seed(11)  # the same dropout masks in both runs
    if peak:
        tracemalloc.start()
    h = x
    for block in blocks:
        h = recompute(block, h) if use_recompute else block(h)
    loss = (h * h).mean()
    held = tracemalloc.get_traced_memory()[0] if peak else 0  # what the tape keeps alive for backward
    loss.backward()
    if peak:
        tracemalloc.stop()
    grads = [p.grad.numpy().copy() for b in blocks for p in b.parameters()]
    for b in blocks:
        b.clear_gradients()
    return float(loss), grads, held


def test_recompute_gradients_equal_the_plain_run():
    blocks = _blocks()
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((8, 64)).astype("float32"))
    plain, checkpointed = _step(blocks, x, False), _step(blocks, x, True)
    assert plain[0] == checkpointed[0]
    for a, b in zip(plain[1], checkpointed[1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_recompute_of_a_function_and_input_gradients():
    layer = nn.Linear(5, 5)
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((3, 5)).astype("float32"), stop_gradient=False)

    def block(t, scale=2.0):
        return paddle.tanh(layer(t)) * scale

    (block(x) ** 2).sum().backward()
    want_x, want_w = x.grad.numpy().copy(), layer.weight.grad.numpy().copy()
    x.clear_gradient()
    layer.clear_gradients()
    (recompute(block, x, scale=2.0) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want_x, rtol=1e-6)
    np.testing.assert_allclose(layer.weight.grad.numpy(), want_w, rtol=1e-6)


def test_recompute_holds_less_activation_memory():
    blocks = _blocks(width=256, n=6)
    x = paddle.to_tensor(np.random.default_rng(2).standard_normal((512, 256)).astype("float32"))
    plain = _step(blocks, x, False, peak=True)[2]
    checkpointed = _step(blocks, x, True, peak=True)[2]
    # plain keeps ~4 activations of 512x256 float32 (0.5 MB) per block plus dropout masks; recompute one
    assert checkpointed < 0.4 * plain, (checkpointed, plain)


def test_recompute_bad_input():
    with pytest.raises(ConfigError, match="callable"):
        recompute(3, paddle.ones([2]))
    with pytest.raises(ConfigError, match="use_reentrant"):
        recompute(paddle.tanh, paddle.ones([2]), use_reentrant="no")
