"""``fleet.init(strategy=DistributedStrategy(...))`` applies recompute, AMP and gradient merge to the
model and optimizer it wraps (one process here; the collectives are tested under mpiexec)."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.distributed import fleet

X = np.random.default_rng(0).standard_normal((8, 4)).astype("float32")


def _model():
    paddle.seed(0)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 1))


def _wrapped(**settings):
    strategy = fleet.DistributedStrategy()
    for key, value in settings.items():
        setattr(strategy, key, value)
    fleet.init(is_collective=True, strategy=strategy)
    return fleet.distributed_model(_model())


def test_recompute_keeps_the_gradients():
    assert paddle.distributed.fleet.utils.recompute is fleet.utils.recompute  # the spelling, no import
    plain = _model()
    plain(paddle.to_tensor(X)).mean().backward()
    model = _wrapped(recompute=True, recompute_configs={"checkpoints": ["2"]})
    model(paddle.to_tensor(X)).mean().backward()
    for a, b in zip(plain.parameters(), model.parameters(), strict=True):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


def test_amp_runs_the_forward_in_bfloat16():
    model = _wrapped(amp=True, amp_configs={"use_bf16": True})
    out = model(paddle.to_tensor(X))
    assert out.dtype == paddle.bfloat16
    np.testing.assert_allclose(out.astype("float32").numpy(), _model()(paddle.to_tensor(X)).numpy(), atol=5e-2)


@pytest.mark.parametrize("k_steps", [2, 4])
def test_gradient_merge_of_k_micro_batches_is_one_large_batch(k_steps):
    big = _model()
    optimizer = paddle.optimizer.SGD(learning_rate=0.5, parameters=big.parameters())
    big(paddle.to_tensor(X)).mean().backward()
    optimizer.step()
    model = _wrapped(gradient_merge=True, gradient_merge_configs={"k_steps": k_steps, "avg": True})
    merged = fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters()))
    for part in np.split(X, k_steps):
        model(paddle.to_tensor(part)).mean().backward()
        merged.step()
        merged.clear_grad()
    for a, b in zip(big.parameters(), model.parameters(), strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
