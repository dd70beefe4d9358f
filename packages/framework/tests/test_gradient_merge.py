"""Gradient merge: k accumulated micro-batch steps equal one step on a k-times-larger batch."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.optimizer.gradient_merge import GradientMergeOptimizer, gradient_merge

RNG = np.random.default_rng(0)
X = RNG.standard_normal((32, 6)).astype("float32")
Y = RNG.standard_normal((32, 2)).astype("float32")


def _train(batches_per_update: int, updates: int = 3):
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(6, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 2))
    opt = paddle.optimizer.Adam(1e-2, parameters=model.parameters())
    if batches_per_update > 1:
        opt = gradient_merge(opt, k_steps=batches_per_update)
    for _ in range(updates):
        for x, y in zip(np.split(X, batches_per_update), np.split(Y, batches_per_update), strict=True):
            loss = ((model(paddle.to_tensor(x)) - paddle.to_tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
    return [p.numpy() for p in model.parameters()]


def test_k_micro_batches_equal_one_big_batch():
    for merged, big in zip(_train(4), _train(1), strict=True):
        np.testing.assert_allclose(merged, big, rtol=1e-5, atol=1e-6)


def test_updates_only_every_k_steps_and_keeps_the_optimizer_api():
    layer = paddle.nn.Linear(2, 1)
    opt = GradientMergeOptimizer(paddle.optimizer.SGD(0.5, parameters=layer.parameters()), k_steps=2, avg=False)
    before = layer.weight.numpy().copy()
    layer(paddle.ones([1, 2])).sum().backward()
    opt.step()
    opt.clear_grad()
    np.testing.assert_array_equal(layer.weight.numpy(), before)
    assert layer.weight.grad is not None and opt.get_lr() == 0.5
    layer(paddle.ones([1, 2])).sum().backward()
    opt.step()
    np.testing.assert_allclose(layer.weight.numpy(), before - 0.5 * 2.0, rtol=1e-6)  # the sum of two, avg=False


def test_bad_arguments():
    with pytest.raises(ConfigError, match="k_steps"):
        gradient_merge(paddle.optimizer.SGD(0.1, parameters=paddle.nn.Linear(1, 1).parameters()), k_steps=0)
    with pytest.raises(ConfigError, match="paddle optimizer"):
        gradient_merge(object(), k_steps=2)
