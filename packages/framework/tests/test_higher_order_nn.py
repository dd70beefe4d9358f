"""Higher-order gradients of the normalisation, loss and embedding ops against float64 central
finite differences of the lower-order gradient (``paddle.grad(create_graph=True)``).

Each check builds ``s = <d^k L / dx^k, v>`` as a differentiable scalar and compares its gradient
with central differences of ``s`` itself, so an order is tested against the one below it.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
import paddlectl.framework.nn.functional as F

EPS = 1e-6


def _scalar(fn, arrays, chain, seed=0):
    """``sum(fn(*inputs) * c)`` differentiated once per entry of ``chain`` (an input index), each
    gradient dotted with a fixed random ``v``; returns (the scalar, the input tensors)."""
    rng = np.random.default_rng(seed)
    tensors = [paddle.to_tensor(a, dtype=a.dtype, stop_gradient=a.dtype.kind != "f") for a in arrays]
    y = fn(*tensors)
    s = (y * paddle.to_tensor(rng.standard_normal(tuple(y.shape)))).sum()
    for i in chain:
        (g,) = paddle.grad(s, tensors[i], create_graph=True)
        s = (g * paddle.to_tensor(rng.standard_normal(tuple(g.shape)))).sum()
    return s, tensors


def _check(fn, arrays, chain, wrt, rtol=1e-5, atol=1e-7):
    """The gradient of the ``len(chain)``-th order scalar w.r.t. input ``wrt`` against central differences."""
    arrays = [np.asarray(a) for a in arrays]
    s, tensors = _scalar(fn, arrays, chain)
    (got,) = paddle.grad(s, tensors[wrt], allow_unused=True)  # None: this order does not depend on it
    got = np.zeros_like(arrays[wrt]) if got is None else got.numpy()
    expected = np.zeros_like(arrays[wrt])
    flat = expected.reshape(-1)
    for k in range(flat.size):
        values = []
        for step in (EPS, -EPS):
            moved = [a.copy() for a in arrays]
            moved[wrt].reshape(-1)[k] += step
            values.append(_scalar(fn, moved, chain)[0].item())
        flat[k] = (values[0] - values[1]) / (2 * EPS)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
X = rng.standard_normal((3, 2, 4))
W, B = rng.uniform(0.5, 2.0, 4), rng.standard_normal(4)


def _layer_norm(x, w, b):
    return F.layer_norm(x, [4], w, b)


@pytest.mark.parametrize("wrt", [0, 1, 2])
@pytest.mark.parametrize("first", [0, 1])
def test_layer_norm_second_derivatives(first, wrt):
    _check(_layer_norm, [X, W, B], chain=[first], wrt=wrt)


def test_layer_norm_third_derivative_wrt_x():
    _check(_layer_norm, [X, W, B], chain=[0, 0], wrt=0, rtol=1e-4, atol=1e-6)


def test_layer_norm_over_two_dims_second_derivative():
    _check(lambda x, w: F.layer_norm(x, [2, 4], w), [X, rng.uniform(0.5, 2.0, (2, 4))], chain=[0], wrt=0)


@pytest.mark.parametrize("fmt", ["NCHW", "NHWC"])
@pytest.mark.parametrize("wrt", [0, 1])
def test_batch_norm_training_second_derivatives(fmt, wrt):
    x = rng.standard_normal((2, 3, 2, 3))

    def fn(x, w, b):
        rm, rv = paddle.to_tensor(np.zeros(3)), paddle.to_tensor(np.ones(3))
        return F.batch_norm(x, rm, rv, w, b, training=True, data_format=fmt)

    _check(fn, [x, rng.uniform(0.5, 2.0, 3), rng.standard_normal(3)], chain=[0], wrt=wrt)


def test_group_norm_second_derivative():
    x = rng.standard_normal((2, 4, 3))
    _check(lambda x, w: F.group_norm(x, 2, weight=w), [x, rng.uniform(0.5, 2.0, 4)], chain=[0], wrt=0)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"label_smoothing": 0.1}, {"ignore_index": 1, "reduction": "sum"}, {"weight": np.array([0.5, 1.0, 2.0, 1.5])}],
    ids=["plain", "smoothing", "ignore", "weight"],
)
def test_cross_entropy_second_derivative_wrt_logits(kwargs):
    kwargs = dict(kwargs)
    if "weight" in kwargs:
        kwargs["weight"] = paddle.to_tensor(kwargs["weight"])
    labels = np.array([0, 1, 3, 2, 1], dtype=np.int64)
    _check(lambda x, y: F.cross_entropy(x, y, **kwargs), [rng.standard_normal((5, 4)), labels], chain=[0], wrt=0)


def test_soft_label_cross_entropy_second_derivative():
    soft = rng.uniform(0.1, 1.0, (3, 4))
    soft /= soft.sum(-1, keepdims=True)
    _check(lambda x, y: F.cross_entropy(x, y, soft_label=True), [rng.standard_normal((3, 4)), soft], chain=[0], wrt=0)


def test_nll_loss_of_log_softmax_second_derivative():
    labels = np.array([2, 0, 1], dtype=np.int64)
    _check(lambda x, y: F.nll_loss(F.log_softmax(x, -1), y), [rng.standard_normal((3, 4)), labels], chain=[0], wrt=0)


def test_embedding_second_derivative_wrt_weight():
    ids = np.array([[0, 2], [2, 3]], dtype=np.int64)

    def fn(ids, w):
        return paddle.tanh(F.embedding(ids, w, padding_idx=3))

    _check(fn, [ids, rng.standard_normal((4, 3))], chain=[1], wrt=1)


def test_fast_and_composed_layer_norm_gradients_agree():
    """The fused backward op (plain backward) and the composed one (create_graph) give one gradient."""
    tensors = [paddle.to_tensor(a, stop_gradient=False) for a in (X, W, B)]
    c = paddle.to_tensor(rng.standard_normal(X.shape))
    fast = paddle.grad((_layer_norm(*tensors) * c).sum(), tensors)
    composed = paddle.grad((_layer_norm(*tensors) * c).sum(), tensors, create_graph=True)
    for a, b in zip(fast, composed, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


class _TextStep(paddle.nn.Layer):
    """embedding -> layer_norm -> dropout(p=0) -> linear -> cross-entropy, returning the
    parameters' gradients: each op's backward must read the program's own values."""

    def __init__(self) -> None:
        super().__init__()
        self.table = self.create_parameter([6, 4], dtype="float64")
        self.scale = self.create_parameter([4], dtype="float64")
        self.head = self.create_parameter([4, 3], dtype="float64")
        for p in self.parameters():
            p.set_value(rng.standard_normal(p.shape))

    def forward(self, ids, labels):
        h = F.layer_norm(F.embedding(ids, self.table), [4], self.scale)
        h = F.dropout(h, 0.0)
        loss = F.cross_entropy(paddle.matmul(h, self.head), labels, reduction="none")
        return paddle.grad(loss, self.parameters())


def test_traced_step_gradients_match_eager_on_other_inputs():
    """Before the vjps read ops' inputs and outputs, the traced backward froze the tracing
    example's saved statistics and labels."""
    from paddlectl.framework.jit import InputSpec

    eager = _TextStep()
    static = paddle.jit.to_static(
        _TextStep(), input_spec=[InputSpec([2, 5], "int64", "ids"), InputSpec([2, 5, 1], "int64", "labels")]
    )
    static.set_state_dict(eager.state_dict())
    for _ in range(2):
        ids = paddle.to_tensor(rng.integers(0, 6, (2, 5)))
        labels = paddle.to_tensor(rng.integers(0, 3, (2, 5, 1)))
        for got, want in zip(static(ids, labels), eager(ids, labels), strict=True):
            assert np.abs(want.numpy()).max() > 1e-3
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_recurrent_and_ctc_gradients_refuse_create_graph():
    """Their backward kernels have no derivative: create_graph is refused, not silently wrong."""
    x = paddle.to_tensor(rng.standard_normal((2, 3, 4)), stop_gradient=False)
    out = paddle.nn.LSTM(4, 5)(x)[0]
    with pytest.raises(RuntimeError, match="recurrent layer's gradient"):
        paddle.grad(out, x, create_graph=True)
    logits = paddle.to_tensor(rng.standard_normal((5, 2, 4)), stop_gradient=False)
    loss = F.ctc_loss(
        logits,
        paddle.to_tensor(np.array([[1, 2], [3, 0]])),
        paddle.to_tensor(np.array([5, 4])),
        paddle.to_tensor(np.array([2, 1])),
        reduction="sum",
    )
    with pytest.raises(RuntimeError, match="ctc_loss's gradient"):
        paddle.grad(loss, logits, create_graph=True)
    (first,) = paddle.grad(loss, logits)  # once is fine
    assert np.isfinite(first.numpy()).all()
