"""paddle.sparse.nn against real Paddle: convolutions (regular and submanifold, 2-D and 3-D),
max pooling, BatchNorm and Softmax layers; output patterns, values, and the gradients of the input
values, the weight and the bias."""

from __future__ import annotations

import numpy as np
import pytest
from _sparse_parity import assert_same, backward_weighted, both, cotangent

import paddlectl.framework as ours
from paddlectl.framework.errors import LayoutError, ShapeError


def _volume(shape, density=0.3, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * (rng.random(shape[:-1]) < density)[..., None]).astype("float32")


IMAGE = _volume((2, 5, 6, 3))
VOLUME = _volume((2, 4, 5, 5, 2), seed=1)


def _conv(p, name, array, kernel, **kwargs):
    x = p.to_tensor(array).to_sparse_coo(array.ndim - 1)
    x.stop_gradient = False
    weight = p.to_tensor(cotangent((*kernel, array.shape[-1], 4), seed=2), stop_gradient=False)
    bias = p.to_tensor(cotangent((4,), seed=3), stop_gradient=False)
    out = getattr(p.sparse.nn.functional, name)(x, weight, bias, **kwargs)
    backward_weighted(p, out, seed=4)
    return out, x.grad, weight.grad, bias.grad


@pytest.mark.parametrize(
    ("name", "array", "kernel", "kwargs"),
    [
        ("conv2d", IMAGE, (3, 3), {}),
        ("conv2d", IMAGE, (3, 2), {"stride": 2, "padding": 1}),
        ("conv2d", IMAGE, (2, 2), {"dilation": 2, "padding": [1, 0]}),
        ("conv2d", IMAGE, (3, 3), {"padding": [1, 1, 0, 0]}),  # before/after pairs
        ("subm_conv2d", IMAGE, (3, 3), {}),
        ("conv3d", VOLUME, (3, 3, 3), {"padding": 1}),
        ("conv3d", VOLUME, (1, 3, 3), {"stride": [1, 2, 2]}),
        ("subm_conv3d", VOLUME, (3, 3, 3), {}),
        ("subm_conv3d", VOLUME, (1, 3, 3), {"padding": 1}),
    ],
)
def test_convolutions_match_paddle(real_paddle, name, array, kernel, kwargs):
    mine, theirs = both(real_paddle, lambda p: _conv(p, name, array, kernel, **kwargs))
    for a, b in zip(mine, theirs, strict=True):
        assert_same(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("kernel", "kwargs"), [(3, {}), ([2, 3, 3], {"stride": 1, "padding": 1})])
def test_max_pool3d_matches_paddle(real_paddle, kernel, kwargs):
    def program(p):
        x = p.to_tensor(VOLUME).to_sparse_coo(4)
        x.stop_gradient = False
        out = p.sparse.nn.MaxPool3D(kernel, **kwargs)(x)
        backward_weighted(p, out)
        return out, x.grad

    for a, b in zip(*both(real_paddle, program), strict=True):
        assert_same(a, b)


def test_batch_norm_trains_on_the_stored_sites(real_paddle):
    def program(p):
        x = p.to_tensor(VOLUME).to_sparse_coo(4)
        x.stop_gradient = False
        norm = p.sparse.nn.BatchNorm(2)
        out = norm(x)
        backward_weighted(p, out)
        return out, x.grad, norm.weight.grad, norm._mean, norm._variance

    for a, b in zip(*both(real_paddle, program), strict=True):
        assert_same(a, b, rtol=1e-4, atol=1e-5)


def test_layers_have_paddles_parameters(real_paddle):
    for name, args in [("Conv2D", (3, 4, 3)), ("SubmConv3D", (2, 5, (1, 3, 3))), ("BatchNorm", (3,))]:
        mine = dict(getattr(ours.sparse.nn, name)(*args).named_parameters())
        theirs = dict(getattr(real_paddle.sparse.nn, name)(*args).named_parameters())
        assert {k: v.shape for k, v in mine.items()} == {k: list(v.shape) for k, v in theirs.items()}


def test_sparse_layers_refuse_bad_inputs():
    x = ours.to_tensor(IMAGE).to_sparse_coo(3)
    with pytest.raises(ShapeError, match="NHWC"):
        ours.sparse.nn.functional.conv2d(x, ours.ones([3, 3, 3, 1]), data_format="NCHW")
    with pytest.raises(ShapeError, match="C_in=3"):
        ours.sparse.nn.functional.conv2d(x, ours.ones([3, 3, 2, 1]))
    with pytest.raises(ShapeError, match="padding as ints"):
        ours.sparse.nn.functional.conv2d(x, ours.ones([3, 3, 3, 1]), padding="SAME")
    with pytest.raises(ShapeError, match="both sides alike"):
        ours.sparse.nn.functional.conv2d(x, ours.ones([3, 3, 3, 1]), padding=[1, 0, 1, 1])
    with pytest.raises(ShapeError, match="stride must be 1"):
        ours.sparse.nn.functional.subm_conv2d(x, ours.ones([3, 3, 3, 1]), stride=2)
    with pytest.raises(ShapeError, match="first 3 dims indexed"):
        ours.sparse.nn.functional.conv2d(ours.to_tensor(IMAGE).to_sparse_coo(4), ours.ones([3, 3, 3, 1]))
    with pytest.raises(LayoutError):
        ours.sparse.nn.functional.conv2d(ours.to_tensor(IMAGE), ours.ones([3, 3, 3, 1]))
    with pytest.raises(LayoutError):
        ours.sparse.nn.ReLU()(ours.to_tensor(IMAGE))


def test_signatures_are_paddles(real_paddle):
    """Every public sparse function and layer takes Paddle's parameters in Paddle's order, so
    positional calls mean the same thing."""
    import inspect

    wrong = {}
    for module, theirs in [
        (ours.sparse, real_paddle.sparse),
        (ours.sparse.nn, real_paddle.sparse.nn),
        (ours.sparse.nn.functional, real_paddle.sparse.nn.functional),
    ]:
        for name in set(theirs.__all__) - {"functional", "nn"}:
            target = getattr(theirs, name)
            mine = getattr(module, name)
            if inspect.isclass(target):
                target, mine = target.__init__, mine.__init__
            expected, got = list(inspect.signature(target).parameters), list(inspect.signature(mine).parameters)
            if got != expected:
                wrong[name] = (got, expected)
    assert not wrong


def _dense_attention(q, k, v, layout, key_padding, attn):
    """NumPy reference of Paddle's sparse attention: -1e9 added where a mask is 0, -inf off the layout."""
    batch, heads, seq, dim = q.shape
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(dim)
    keep = key_padding[:, None, None, :] * attn[None, None]
    scores = np.where(layout.reshape(batch, heads, seq, seq), scores + (keep - 1.0) * 1e9, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True) @ v


def test_attention_matches_the_dense_reference_and_differentiates():
    """Paddle's sparse attention is CUDA-only: the oracle is its formula in NumPy (float64), and the
    gradient of Q is checked against central differences of that formula."""
    rng = np.random.default_rng(3)
    batch, heads, seq, dim = 2, 2, 5, 3
    q, k, v = (rng.standard_normal((batch, heads, seq, dim)) for _ in range(3))
    layout = (rng.random((batch * heads, seq, seq)) < 0.6) | np.eye(seq, dtype=bool)
    key_padding = np.ones((batch, seq))
    key_padding[1, -2:] = 0
    attn = np.tril(np.ones((seq, seq)))
    weights = rng.standard_normal((batch, heads, seq, dim))

    query = ours.to_tensor(q, stop_gradient=False)
    out = ours.sparse.nn.functional.attention(
        query, ours.to_tensor(k), ours.to_tensor(v), ours.to_tensor(layout.astype("float64")).to_sparse_csr(),
        ours.to_tensor(key_padding), ours.to_tensor(attn),
    )  # fmt: skip
    expected = _dense_attention(q, k, v, layout, key_padding, attn)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)
    (out * ours.to_tensor(weights)).sum().backward()
    step, index = 1e-6, (1, 0, 2, 1)
    plus, minus = q.copy(), q.copy()
    plus[index] += step
    minus[index] -= step
    numeric = ((_dense_attention(plus, k, v, layout, key_padding, attn) - _dense_attention(minus, k, v, layout,
                key_padding, attn)) * weights).sum() / (2 * step)  # fmt: skip
    np.testing.assert_allclose(query.grad.numpy()[index], numeric, rtol=1e-5)
