"""A traced training step's backward is part of the static program: ``paddle.grad`` inside a
function given to ``jit.to_static`` records the backward ops, and the program computes eager's
gradients on inputs, and weights, other than the ones it was traced with."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.jit import InputSpec

RNG = np.random.default_rng(0)
SPECS = [InputSpec([4, 3], "float64", "x"), InputSpec([4, 2], "float64", "target")]


class GradStep(paddle.nn.Layer):
    """A tanh MLP of converted ops (matmul, add, tanh, multiply) whose forward returns the
    gradients of a squared error with respect to its parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.w1 = self.create_parameter([3, 5], dtype="float64")
        self.b1 = self.create_parameter([5], dtype="float64", is_bias=True)
        self.w2 = self.create_parameter([5, 2], dtype="float64")
        self.b2 = self.create_parameter([2], dtype="float64", is_bias=True)
        for p in self.parameters():
            p.set_value(RNG.standard_normal(p.shape))

    def loss(self, x, target):
        hidden = paddle.tanh(paddle.add(paddle.matmul(x, self.w1), self.b1))
        diff = paddle.add(paddle.matmul(hidden, self.w2), self.b2) - target
        return paddle.multiply(diff, diff)  # not reduced: backward seeds it with ones

    def forward(self, x, target):
        return paddle.grad(self.loss(x, target), self.parameters())


class BackwardStep(GradStep):
    """The same step written with ``loss.backward()`` and reading ``p.grad``: twice, so the
    program must hold the accumulation."""

    def forward(self, x, target):
        self.loss(x, target).backward()
        self.loss(x, 0.5 * target).backward()
        return [p.grad for p in self.parameters()]


def _counts(program) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in program.walk():
        counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def _data():
    return paddle.to_tensor(RNG.standard_normal((4, 3))), paddle.to_tensor(RNG.standard_normal((4, 2)))


def test_paddle_grad_in_a_traced_step_records_the_backward_and_matches_eager():
    eager = GradStep()
    static = paddle.jit.to_static(GradStep(), input_spec=SPECS)
    static.set_state_dict(eager.state_dict())
    x, target = _data()  # not the examples the trace ran on
    got, want = static(x, target), eager(x, target)
    assert len(got) == 4
    for g, w, p in zip(got, want, eager.parameters(), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12, err_msg=p.name)
        assert np.abs(w.numpy()).max() > 1e-3  # a gradient that could pass for zeros proves nothing
    program = static.forward.program
    counts = _counts(program)
    assert counts["matmul"] >= 2 + 3, counts  # forward 2; backward dW2, dhidden, dW1
    assert counts.get("sum_like", 0) >= 2, counts  # the bias gradients
    assert counts.get("param", 0) == 4 and sorted(program.weights) == sorted(static.state_dict()), program.weights


def test_a_traced_step_trains_as_eager_does():
    """Three SGD steps with the traced step's gradients follow eager's: the backward reads the
    current weights, nothing of the tracing examples is frozen into it."""
    eager = GradStep()
    static = paddle.jit.to_static(GradStep(), input_spec=SPECS)
    static.set_state_dict(eager.state_dict())
    for _ in range(3):
        x, target = _data()
        for model in (eager, static):
            grads = model(x, target)
            for p, g in zip(model.parameters(), grads, strict=True):
                p.set_value(p.numpy() - 0.1 * g.numpy())
    for a, b in zip(eager.parameters(), static.parameters(), strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-10, err_msg=a.name)


def test_tracing_a_step_leaves_no_gradient_on_the_parameters():
    static = paddle.jit.to_static(GradStep(), input_spec=SPECS)
    assert static.forward.program is not None
    assert all(p.grad is None for p in static.parameters())


def test_loss_backward_in_a_traced_step_gives_p_grad_as_eager_does():
    eager = BackwardStep()
    static = paddle.jit.to_static(BackwardStep(), input_spec=SPECS)
    static.set_state_dict(eager.state_dict())
    stale = RNG.standard_normal((5,))
    static.b1.grad = stale  # a gradient from before: tracing must neither use it nor change it
    x, target = _data()
    got = static(x, target)
    for p in eager.parameters():
        p.clear_gradient(set_to_zero=False)
    want = eager(x, target)
    for g, w, p in zip(got, want, eager.parameters(), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12, err_msg=p.name)
    np.testing.assert_array_equal(static.b1.grad.numpy(), stale)
    assert static.w1.grad is None
    assert _counts(static.forward.program)["matmul"] >= 2 * (2 + 3)


class PenaltyStep(GradStep):
    """A gradient penalty: the input gradient taken with create_graph, squared, differentiated
    again with respect to the parameters (second derivatives inside the traced program)."""

    def forward(self, x, target):
        x.stop_gradient = False
        (dx,) = paddle.grad(self.loss(x, target), [x], create_graph=True)
        return paddle.grad(paddle.multiply(dx, dx), self.parameters())


def test_a_traced_gradient_penalty_matches_eager():
    eager = PenaltyStep()
    static = paddle.jit.to_static(PenaltyStep(), input_spec=SPECS)
    static.set_state_dict(eager.state_dict())
    x, target = _data()
    got = static(x, target)
    want = eager(paddle.to_tensor(x.numpy()), target)
    for g, w, p in zip(got, want, eager.parameters(), strict=True):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12, err_msg=p.name)


F = paddle.nn.functional
SYMBOLIC_BATCH = {
    "mean": lambda x: (x * x).mean(),
    "mean over the batch": lambda x: (x * x).mean(axis=0).sum(),
    "mse": lambda x: F.mse_loss(x, x * 0.5),
    "bce with logits": lambda x: F.binary_cross_entropy_with_logits(x, paddle.ones_like(x)),
    "layer_norm": lambda x: F.layer_norm(x, [4]).pow(2).sum(),
    "a picked column": lambda x: F.softmax(x, -1)[:, 0].sum(),
    "reshape": lambda x: x.reshape([-1, 2]).tanh().max(),
    "rows over their sums ([N, 1] broadcast)": lambda x: (x / x.sum(axis=1, keepdim=True)).pow(2).sum(),
    "var and a bias": lambda x: ((x * paddle.to_tensor([1.0, 2, 3, 4])).tanh() + x.var(axis=0)).sum(),
    "std of everything": lambda x: x.std(),
    "extrema": lambda x: x.max() + x.min(axis=1).sum(),
    "expand_as": lambda x: (x.sum(axis=1, keepdim=True).expand_as(x) * x).sum(),
    "flatten": lambda x: x.unsqueeze(1).flatten(1).pow(3).sum(),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC_BATCH))
def test_a_traced_gradient_with_a_symbolic_batch_matches_eager_at_every_size(name):
    """The backward takes its sizes from the values it runs on (``spread``, ``sum_like``,
    ``reshape_as``), so one program with a ``None`` batch serves every batch size."""
    loss = SYMBOLIC_BATCH[name]

    def gradient(x):
        x.stop_gradient = False
        return paddle.grad(loss(x), [x])[0]

    traced = paddle.jit.to_static(gradient, input_spec=[InputSpec([None, 4], "float32")])
    for n in (6, 1, 9):
        x = RNG.standard_normal((n, 4)).astype("float32")
        np.testing.assert_allclose(
            traced(paddle.to_tensor(x)).numpy(), gradient(paddle.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6
        )
