"""Dropout (seeded masks, both modes, shared axes, channel dropout) and embedding (padding row,
max_norm, scale_grad_by_freq) against finite differences and real PaddlePaddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare, layer

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

F = paddle.nn.functional
rng = np.random.default_rng(0)


# ----- dropout -----------------------------------------------------------------------------------


def test_dropout_is_reproducible_under_paddle_seed():
    x = paddle.ones([4, 50])
    paddle.seed(7)
    first = F.dropout(x, 0.3).numpy()
    second = F.dropout(x, 0.3).numpy()
    paddle.seed(7)
    np.testing.assert_array_equal(F.dropout(x, 0.3).numpy(), first)
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout_in_one_pass_is_the_uniform_draw_compared_bit_for_bit(dtype, p):
    from paddlectl.framework.ops import random

    x = rng.standard_normal((7, 313)).astype(dtype)  # several runs of the engine's 312 words
    x[0, :3] = [np.nan, np.inf, -0.0]
    paddle.seed(11)
    out = F.dropout(paddle.to_tensor(x), p).numpy()
    paddle.seed(11)
    keep = random.uniform(x.shape, 0.0, 1.0) >= np.float32(p)
    mask = keep.astype(dtype) * x.dtype.type(1.0 / (1.0 - p) if p < 1 else 1.0)
    np.testing.assert_array_equal(out, x * mask)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_upscale_in_train_keeps_expectation(p):
    paddle.seed(1)
    x = paddle.to_tensor(rng.uniform(1, 2, (200, 100)).astype("float32"))
    out = F.dropout(x, p).numpy()
    kept = out != 0
    assert abs(kept.mean() - (1 - p)) < 0.02
    np.testing.assert_allclose(out[kept], x.numpy()[kept] / (1 - p), rtol=1e-6)
    assert F.dropout(x, p, training=False) is x


def test_dropout_downscale_in_infer_matches_paddle(real_paddle):
    paddle.seed(2)
    x = rng.uniform(1, 2, (30, 40)).astype("float32")
    out = F.dropout(paddle.to_tensor(x), 0.25, mode="downscale_in_infer").numpy()
    kept = out != 0
    np.testing.assert_array_equal(out[kept], x[kept])  # no scaling in training
    compare(
        real_paddle,
        lambda mod: lambda t: mod.nn.functional.dropout(t, 0.25, training=False, mode="downscale_in_infer"),
        x,
    )
    compare(real_paddle, lambda mod: lambda t: mod.nn.functional.dropout(t, 0.25, training=False), x)


@pytest.mark.parametrize("p, expected", [(0.0, "x"), (1.0, "zeros")])
def test_dropout_edge_probabilities_match_paddle(real_paddle, p, expected):
    x = rng.standard_normal((3, 4)).astype("float32")
    got, theirs = compare(real_paddle, lambda mod: lambda t: mod.nn.functional.dropout(t, p), x)
    np.testing.assert_array_equal(got, x if expected == "x" else np.zeros_like(x))


def test_dropout_gradient_is_the_mask(gradcheck):
    def fn(x):
        paddle.seed(3)  # the same mask on every call, so finite differences see one function
        return F.dropout(x, 0.4, axis=[0, 2]) * x

    gradcheck(fn, rng.standard_normal((3, 4, 5)))
    paddle.seed(4)
    x = paddle.to_tensor(rng.uniform(1, 2, (6, 7)), stop_gradient=False)
    out = F.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), out.numpy() / x.numpy())


@pytest.mark.parametrize("axis", [0, [1], [0, 2], -1])
def test_dropout_axis_shares_the_mask(axis):
    paddle.seed(5)
    out = F.dropout(paddle.ones([6, 5, 4]), 0.5, axis=axis).numpy()
    axes = {a % 3 for a in np.atleast_1d(axis)}
    for other in {0, 1, 2} - axes:
        assert (np.ptp(out, axis=other) == 0).all(), f"mask varies along axis {other}"


@pytest.mark.parametrize("fmt, channel_axis", [("NCHW", 1), ("NHWC", 3)])
def test_dropout2d_drops_whole_channels(fmt, channel_axis):
    paddle.seed(6)
    shape = [4, 8, 3, 3] if fmt == "NCHW" else [4, 3, 3, 8]
    out = F.dropout2d(paddle.ones(shape), 0.5, data_format=fmt).numpy()
    spatial = (2, 3) if fmt == "NCHW" else (1, 2)
    assert (np.ptp(out, axis=spatial) == 0).all()
    assert set(np.unique(out)) == {0.0, 2.0}
    layer2d = paddle.nn.Dropout2D(0.5, data_format=fmt)
    layer2d.eval()
    np.testing.assert_array_equal(layer2d(paddle.ones(shape)).numpy(), np.ones(shape))


def test_dropout_layers_and_reprs_match_paddle(real_paddle):
    for args, kwargs in [((), {}), ((0.2,), {"axis": 1, "mode": "downscale_in_infer"})]:
        assert repr(paddle.nn.Dropout(*args, **kwargs)) == repr(real_paddle.nn.Dropout(*args, **kwargs))
        layer(real_paddle, "Dropout", args, kwargs, rng.standard_normal((3, 4)).astype("float32"), train=False)
    assert repr(paddle.nn.Dropout2D(0.3)) == repr(real_paddle.nn.Dropout2D(0.3))
    drop = paddle.nn.Dropout(0.5)
    paddle.seed(8)
    assert (drop(paddle.ones([100])).numpy() == 0).any()


def test_dropout_bad_inputs():
    x = paddle.ones([2, 3])
    with pytest.raises(ValueError, match="p must be a number in \\[0, 1\\]"):
        F.dropout(x, 1.5)
    with pytest.raises(ValueError, match="mode must be one of"):
        F.dropout(x, 0.5, mode="scale")
    with pytest.raises(ShapeError, match="dropout2d: expected a 4-D input"):
        F.dropout2d(x)
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        F.dropout(x, 0.5, axis=2)
    with pytest.raises(DTypeError, match="dropout"):
        F.dropout(paddle.to_tensor(np.ones((2, 2), "int64")), 0.5)


# ----- embedding ---------------------------------------------------------------------------------

IDS = np.array([[1, 2, 5, 1], [0, 1, 1, 3]], dtype="int64")


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"padding_idx": 1}, {"padding_idx": -1}, {"scale_grad_by_freq": True}, {"sparse": True, "padding_idx": 0}],
)
@pytest.mark.parametrize("ids", [IDS, IDS[0], np.zeros((0, 3), "int64"), np.array(4)])
def test_embedding_matches_paddle(real_paddle, kwargs, ids):
    weight = rng.standard_normal((6, 3)).astype("float32")
    # Paddle's sparse gradient holds only the looked-up rows; ours is always dense
    grads = not kwargs.get("sparse")
    compare(real_paddle, lambda mod: lambda i, w: mod.nn.functional.embedding(i, w, **kwargs), ids, weight, grads=grads)


def test_embedding_max_norm_renormalises_rows_like_paddle(real_paddle):
    weight = (rng.standard_normal((6, 3)) * 2).astype("float32")
    tables = {}

    def build(mod):
        def fn(i, w):
            tables[mod] = w
            return mod.nn.functional.embedding(i, w, max_norm=1.5)

        return fn

    compare(real_paddle, build, IDS, weight)
    np.testing.assert_allclose(tables[paddle].numpy(), tables[real_paddle].numpy(), rtol=1e-6)
    assert (np.linalg.norm(tables[paddle].numpy()[np.unique(IDS)], axis=1) <= 1.5 + 1e-5).all()


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_gradient_matches_finite_differences(gradcheck, padding_idx):
    ids = paddle.to_tensor(np.array([[0, 2, 2], [3, 1, 2]]))
    gradcheck(lambda w: F.embedding(ids, w, padding_idx=padding_idx) * 1.0, rng.standard_normal((4, 3)))


@pytest.mark.parametrize(
    "args, kwargs", [((6, 3), {}), ((6, 3), {"padding_idx": 2}), ((6, 3), {"padding_idx": -2, "sparse": True})]
)
def test_embedding_layer_matches_paddle(real_paddle, args, kwargs):
    assert repr(paddle.nn.Embedding(*args, **kwargs)) == repr(real_paddle.nn.Embedding(*args, **kwargs))
    layer(real_paddle, "Embedding", args, kwargs, IDS, grads=not kwargs.get("sparse"))


def test_embedding_layer_initialisation():
    emb = paddle.nn.Embedding(10, 4, padding_idx=-1)
    np.testing.assert_array_equal(emb.weight.numpy()[9], 0)
    limit = np.sqrt(6 / (10 + 4))  # Xavier-uniform, Paddle's default
    assert np.abs(emb.weight.numpy()).max() <= limit
    table = rng.standard_normal((3, 2)).astype("float32")
    frozen = paddle.nn.Embedding(3, 2, _weight=table, _freeze=True)
    np.testing.assert_array_equal(frozen.weight.numpy(), table)
    assert frozen.weight.stop_gradient


def test_embedding_bad_inputs():
    weight = paddle.ones([4, 2])
    with pytest.raises(DTypeError, match="ids must be an integer tensor"):
        F.embedding(paddle.to_tensor([0.0, 1.0]), weight)
    with pytest.raises(ShapeError, match="ids must lie in \\[0, 4\\)"):
        F.embedding(paddle.to_tensor([0, 4]), weight)
    with pytest.raises(ShapeError, match="ids must lie"):
        F.embedding(paddle.to_tensor([-1]), weight)
    with pytest.raises(ShapeError, match="weight must be 2-D"):
        F.embedding(paddle.to_tensor([0]), paddle.ones([4]))
    with pytest.raises(ValueError, match="padding_idx must be in"):
        F.embedding(paddle.to_tensor([0]), weight, padding_idx=4)
    with pytest.raises(ValueError, match="padding_idx must be in"):
        paddle.nn.Embedding(4, 2, padding_idx=-5)
