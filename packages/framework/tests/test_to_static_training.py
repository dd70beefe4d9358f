"""Training through ``paddle.jit.to_static``: its outputs take part in autograd (``run_program``), with
the same losses and gradients as the dynamic graph, at any batch size an InputSpec allows."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.static import InputSpec


class Net(paddle.nn.Layer):
    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(6, 16)
        self.norm = paddle.nn.LayerNorm(16)
        self.drop = paddle.nn.Dropout(dropout)
        self.fc2 = paddle.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(paddle.tanh(self.norm(self.fc1(x)))))


def _pair(dropout=0.0, spec=(None, 6)):
    paddle.seed(7)
    eager = Net(dropout)
    static = Net(dropout)
    static.set_state_dict(eager.state_dict())
    return eager, paddle.jit.to_static(static, input_spec=[InputSpec(list(spec), "float32")])


def _step(model, opt, x, y):
    loss = paddle.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    opt.step()
    opt.clear_grad()
    return float(loss), grads


@pytest.mark.parametrize("batches", [(8, 8, 5), (4,)])
def test_training_a_to_static_layer_matches_the_dynamic_graph(batches):
    eager, static = _pair()
    opts = [paddle.optimizer.Adam(0.01, parameters=m.parameters()) for m in (eager, static)]
    rng = np.random.default_rng(0)
    for n in batches:  # a symbolic batch: one forward program, a backward program per batch size
        x = paddle.to_tensor(rng.standard_normal((n, 6)).astype("float32"))
        y = paddle.to_tensor(rng.integers(0, 3, (n, 1)))
        (le, ge), (ls, gs) = (_step(m, o, x, y) for m, o in zip((eager, static), opts, strict=True))
        assert ls == pytest.approx(le, rel=1e-6)
        for a, b in zip(ge, gs, strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_dropout_masks_agree_between_the_forward_and_the_backward_program():
    eager, static = _pair(dropout=0.5, spec=(4, 6))
    x = paddle.to_tensor(np.random.default_rng(1).standard_normal((4, 6)).astype("float32"))
    results = []
    for model in (eager, static):
        paddle.seed(3)
        out = model(x)
        (out * out).sum().backward()
        results.append((out.numpy(), model.fc1.weight.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)


def test_gradients_reach_the_inputs_of_a_to_static_function():
    fn = paddle.jit.to_static(lambda a, b: ((a * b).tanh().sum(), a.max()))
    a = paddle.to_tensor([[0.5, -1.0], [2.0, 0.1]], stop_gradient=False)
    b = paddle.to_tensor([[1.5, 0.3], [-0.2, 1.0]])
    total, peak = fn(a, b)
    (total + 2 * peak).backward()
    expected = (1 - np.tanh(a.numpy() * b.numpy()) ** 2) * b.numpy()
    expected[1, 0] += 2
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-6)
    assert b.grad is None


def test_without_the_tape_a_call_runs_the_program_alone():
    _, static = _pair()
    with paddle.no_grad():
        out = static(paddle.ones([2, 6]))
    assert out.stop_gradient


def test_a_to_static_layer_inside_a_traced_function_is_inlined():
    eager, static = _pair()
    outer = paddle.jit.to_static(lambda x: static(x).sum(), input_spec=[InputSpec([None, 6], "float32")])
    x = np.random.default_rng(2).standard_normal((3, 6)).astype("float32")
    assert "run_program" not in str(outer.program)
    np.testing.assert_allclose(float(outer(x)), float(eager(paddle.to_tensor(x)).sum()), rtol=1e-6)
