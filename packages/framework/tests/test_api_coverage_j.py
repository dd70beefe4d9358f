"""Margin, dice, N-pair and distance-triplet losses (ops/margin_losses.py) and their layers against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, DTypeError, ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


X = r(4, 5)
LABEL = np.array([1, 0, 4, 2], "int64")
MULTI = np.array([[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [0, 1, 2, 3, 4], [-1, 1, 0, 0, 0]], "int64")
WEIGHT = RNG.uniform(0.5, 2.0, (5,)).astype("float32")
PROBS = RNG.uniform(0.0, 1.0, (2, 3, 3, 4)).astype("float32")
SEGMENTS = RNG.integers(0, 4, (2, 3, 3, 1)).astype("int64")
PAIRS = np.array([1, 2, 1, 3], "int64")

CASES = [
    (lambda F, x, y: F.multi_margin_loss(x, y), (X, LABEL)),
    (lambda F, x, y: F.multi_margin_loss(x, y, p=2, margin=0.7, weight=_t(F, WEIGHT), reduction="none"), (X, LABEL)),
    (lambda F, x, y: F.multi_margin_loss(x, y, reduction="sum"), (X, LABEL.astype("int32"))),
    (lambda F, x, y: F.multi_label_margin_loss(x, y, reduction="none"), (X, MULTI)),
    (lambda F, x, y: F.multi_label_margin_loss(x, y), (X, MULTI)),
    (lambda F, x, y: F.dice_loss(x, y), (PROBS, SEGMENTS)),
    (lambda F, x, y: F.dice_loss(x, y, epsilon=0.1), (PROBS[:, 0, 0], SEGMENTS[:, 0, 0])),
    (lambda F, x, y: F.npair_loss(x, x * 0.5 + 0.2, y, l2_reg=0.01), (r(4, 3), PAIRS)),
    (lambda F, x, y: F.triplet_margin_with_distance_loss(x, y, y * 0.3), (r(4, 3), r(4, 3))),
    (
        lambda F, x, y: F.triplet_margin_with_distance_loss(
            x,
            y,
            x * 0.4 - y,
            distance_function=lambda a, b: (a - b).abs().sum(-1),
            margin=2.0,
            swap=True,
            reduction="none",
        ),
        (r(4, 3), r(4, 3)),
    ),  # fmt: skip
]


def _t(F, array):
    import sys

    return sys.modules[F.__name__.split(".nn")[0]].to_tensor(array)


@pytest.mark.parametrize("fn,arrays", CASES)
def test_losses_match_paddle(real_paddle, fn, arrays):
    compare(real_paddle, lambda P: lambda a, b: fn(P.nn.functional, a, b), *arrays, rtol=1e-5, atol=1e-5)


LAYERS = [
    (lambda nn: nn.MultiMarginLoss(p=2, margin=0.5), (X, LABEL)),
    (lambda nn: nn.MultiMarginLoss(weight=_t(nn, WEIGHT), reduction="sum"), (X, LABEL)),
    (lambda nn: nn.MultiLabelMarginLoss(reduction="none"), (X, MULTI)),
    (lambda nn: nn.TripletMarginWithDistanceLoss(margin=0.5, swap=True), (r(4, 3), r(4, 3), r(4, 3))),
]


@pytest.mark.parametrize("build,arrays", LAYERS)
def test_loss_layers_match_paddle(real_paddle, build, arrays):
    compare(real_paddle, lambda P: build(P.nn), *arrays, rtol=1e-5, atol=1e-5)


def test_bad_inputs_raise_typed_errors():
    F = ours.nn.functional
    x = ours.to_tensor(X)
    with pytest.raises(DTypeError, match="int64"):
        F.multi_margin_loss(x, ours.to_tensor(LABEL.astype("float32")))
    with pytest.raises(ShapeError, match="one per class"):
        F.multi_margin_loss(x, ours.to_tensor(LABEL), weight=ours.to_tensor(WEIGHT[:3]))
    with pytest.raises(ShapeError, match=r"\[N, C\]"):
        F.multi_label_margin_loss(x, ours.to_tensor(LABEL))
    with pytest.raises(ShapeError, match="last dimension of 1"):
        F.dice_loss(ours.to_tensor(PROBS), ours.to_tensor(SEGMENTS[..., 0]))
    with pytest.raises(ShapeError, match="must match"):
        F.triplet_margin_with_distance_loss(x, x, ours.to_tensor(r(4, 3)))


SPATIAL = [
    (lambda F, x: F.temporal_shift(x, 3), (6, 7, 2, 3)),
    (lambda F, x: F.temporal_shift(x, 2, shift_ratio=0.4, data_format="NHWC"), (4, 2, 3, 5)),
    (lambda F, x: F.temporal_shift(x, 1, shift_ratio=0.2), (2, 6, 1, 1)),
    (lambda F, x: F.affine_grid(x, [2, 3, 4, 5]), (2, 2, 3)),
    (lambda F, x: F.affine_grid(x, [2, 1, 3, 4, 2], align_corners=False), (2, 3, 4)),
    (lambda F, x: F.affine_grid(x, _t(F, np.array([1, 1, 1, 4], "int32")), align_corners=False), (1, 2, 3)),
]


@pytest.mark.parametrize("fn,shape", SPATIAL)
def test_temporal_shift_and_affine_grid_match_paddle(real_paddle, fn, shape):
    compare(real_paddle, lambda P: lambda x: fn(P.nn.functional, x), r(*shape), rtol=1e-5, atol=1e-6)


def test_gather_tree_matches_paddle(real_paddle):
    ids, parents = RNG.integers(0, 10, (5, 2, 3)), RNG.integers(0, 3, (5, 2, 3))
    got = ours.nn.functional.gather_tree(ours.to_tensor(ids), ours.to_tensor(parents))
    expected = real_paddle.nn.functional.gather_tree(real_paddle.to_tensor(ids), real_paddle.to_tensor(parents))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_spatial_bad_inputs_raise_typed_errors():
    F = ours.nn.functional
    with pytest.raises(ShapeError, match="multiple of seg_num"):
        F.temporal_shift(ours.to_tensor(r(5, 4, 1, 1)), 2)
    with pytest.raises(ShapeError, match=r"\[N, 2, 3\]"):
        F.affine_grid(ours.to_tensor(r(2, 2, 3)), [2, 1, 3, 3, 3])
    with pytest.raises(DTypeError, match="integer"):
        F.gather_tree(ours.to_tensor(r(2, 1, 2)), ours.to_tensor(np.zeros((2, 1, 2), "int64")))


def _paths(model, **kwargs):
    return [name for name, _ in model.named_sublayers(**kwargs)]


@pytest.mark.parametrize("remove_duplicate", [True, False])
def test_named_sublayers_remove_duplicate_matches_paddle(real_paddle, remove_duplicate):
    def build(P):
        shared = P.nn.Linear(3, 3)
        return P.nn.Sequential(shared, P.nn.Sequential(shared, P.nn.ReLU()), shared)

    kwargs = {"include_self": True, "remove_duplicate": remove_duplicate}
    assert _paths(build(ours), **kwargs) == _paths(build(real_paddle), **kwargs)


def test_to_static_state_dict_adds_non_persistable_buffers_like_paddle(real_paddle):
    def build(P):
        class Net(P.nn.Layer):
            def __init__(self):
                super().__init__()
                self.fc = P.nn.Linear(2, 3)
                self.register_buffer("kept", P.ones([2]))
                self.register_buffer("scratch", P.zeros([3]), persistable=False)
                self.norm = P.nn.BatchNorm1D(3)

        return Net()

    mine, theirs = build(ours), build(real_paddle)
    assert list(mine.to_static_state_dict()) == list(theirs.to_static_state_dict())
    assert "scratch" in mine.to_static_state_dict() and "scratch" not in mine.state_dict()
    detached = mine.to_static_state_dict(keep_vars=False)
    assert detached["fc.weight"].stop_gradient and not mine.fc.weight.stop_gradient
    np.testing.assert_array_equal(detached["fc.weight"].numpy(), mine.fc.weight.numpy())


@pytest.mark.parametrize(
    "shape,groups", [((4, 4, 3), 1), ((6, 3, 3, 3), 2), ((2, 5, 2, 4), 1), ((4, 2, 3, 3, 3), 2), ((3, 1, 1, 1), 3)]
)
def test_dirac_matches_paddle(real_paddle, shape, groups):
    def weight(P):
        return P.create_parameter(list(shape), "float32", default_initializer=P.nn.initializer.Dirac(groups)).numpy()

    np.testing.assert_array_equal(weight(ours), weight(real_paddle))


@pytest.mark.parametrize("shape", [(3, 1, 4, 4), (2, 2, 3, 3), (1, 1, 5, 5)])
def test_bilinear_matches_paddle(real_paddle, shape):
    def weight(P):
        return P.create_parameter(list(shape), "float32", default_initializer=P.nn.initializer.Bilinear()).numpy()

    np.testing.assert_allclose(weight(ours), weight(real_paddle), rtol=1e-6, atol=0)


def test_set_global_initializer_matches_paddle(real_paddle):
    def weights(P):
        P.nn.initializer.set_global_initializer(P.nn.initializer.Constant(0.5), P.nn.initializer.Constant(-2.0))
        try:
            explicit = P.nn.Linear(2, 2, weight_attr=P.nn.initializer.Constant(3.0))
            layers = [P.nn.Conv2D(2, 3, 3), P.nn.BatchNorm2D(3), explicit]
        finally:
            P.nn.initializer.set_global_initializer(None, None)
        after = P.nn.Linear(2, 2, bias_attr=P.nn.initializer.Constant(1.0))
        return [p.numpy() for layer in layers for p in layer.parameters()] + [after.bias.numpy()]

    for got, expected in zip(weights(ours), weights(real_paddle), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_initializer_bad_inputs_raise_typed_errors():
    init = ours.nn.initializer
    with pytest.raises(ConfigError, match="Initializer or None"):
        init.set_global_initializer("xavier")
    with pytest.raises(ShapeError, match="groups=2"):
        ours.create_parameter([3, 3, 3], "float32", default_initializer=init.Dirac(2))
    with pytest.raises(ShapeError, match=r"\[C, M, K, K\]"):
        ours.create_parameter([3, 1, 3, 4], "float32", default_initializer=init.Bilinear())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("training", [True, False])
def test_rrelu_draws_paddles_slopes(real_paddle, dtype, training):
    x = r(3, 7).astype(dtype)

    def run(P):
        P.seed(7)
        t = P.to_tensor(x, stop_gradient=False)
        first = P.nn.functional.rrelu(t, 0.1, 0.4, training=training)
        layer = P.nn.RReLU()
        layer.train() if training else layer.eval()
        second = layer(t)  # continues the same stream
        (first * second).sum().backward()
        return first.numpy(), second.numpy(), t.grad.numpy()

    for got, expected in zip(run(ours), run(real_paddle), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)
    if training:
        assert len(np.unique(run(ours)[0][x < 0] / x[x < 0])) > 1  # slopes are drawn, not the mean


def test_rrelu_bad_arguments():
    with pytest.raises(ValueError, match="upper"):
        ours.nn.functional.rrelu(ours.to_tensor(X), 0.5, 0.2)
    with pytest.raises(DTypeError, match="floating"):
        ours.nn.functional.rrelu(ours.to_tensor(LABEL))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("hard,axis", [(False, -1), (False, 1), (True, -1), (True, 0)])
def test_gumbel_softmax_draws_paddles_noise(real_paddle, dtype, hard, axis):
    x, c = r(3, 5, 2).astype(dtype), r(3, 5, 2).astype(dtype)

    def run(P):
        P.seed(5)
        t = P.to_tensor(x, stop_gradient=False)
        first = P.nn.functional.gumbel_softmax(t, temperature=0.7, hard=hard, axis=axis)
        second = P.nn.functional.gumbel_softmax(t)  # continues the same stream
        (first * P.to_tensor(c) + second * second).sum().backward()
        return first.numpy(), second.numpy(), t.grad.numpy()

    tol = 1e-6 if dtype == "float32" else 1e-12
    for got, expected in zip(run(ours), run(real_paddle), strict=True):
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_gumbel_softmax_bad_arguments():
    with pytest.raises(ValueError, match="temperature"):
        ours.nn.functional.gumbel_softmax(ours.to_tensor(X), temperature=0)
    with pytest.raises(DTypeError, match="floating"):
        ours.nn.functional.gumbel_softmax(ours.to_tensor(LABEL))
