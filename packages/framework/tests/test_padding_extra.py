"""Padding layer families, in-place functional activations and extra losses against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


PADS = [
    (lambda nn: nn.Pad1D([1, 2], mode="reflect"), (1, 2, 4)),
    (lambda nn: nn.Pad1D(2, value=1.5), (1, 2, 4)),
    (lambda nn: nn.Pad2D([1, 2, 0, 1], mode="replicate"), (1, 2, 3, 4)),
    (lambda nn: nn.Pad3D([1, 0, 1, 1, 0, 2], mode="circular"), (1, 1, 2, 3, 3)),
    (lambda nn: nn.ZeroPad1D([0, 2]), (1, 2, 3)),
    (lambda nn: nn.ZeroPad2D([1, 0, 0, 2]), (1, 2, 3, 4)),
    (lambda nn: nn.ZeroPad3D(1), (1, 1, 2, 2, 2)),
    (lambda nn: nn.ConstantPad2D([1, 1, 2, 0], 3.0), (1, 2, 3, 3)),
    (lambda nn: nn.ConstantPad1d(1, value=-1.0), (1, 2, 3)),
    (lambda nn: nn.ReflectionPad2D([1, 2, 2, 1]), (1, 2, 3, 4)),
    (lambda nn: nn.ReflectionPad3d(1), (1, 1, 3, 3, 3)),
    (lambda nn: nn.ReplicationPad1D([2, 1]), (2, 1, 3)),
    (lambda nn: nn.ReplicationPad3D([0, 1, 1, 0, 1, 0]), (1, 1, 2, 2, 2)),
    (lambda nn: nn.CircularPad2D(1), (1, 2, 3, 3)),
    (lambda nn: nn.Pad2D(1, data_format="NHWC"), (1, 3, 3, 2)),
    (lambda nn: nn.Softmax2D(), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("build,shape", PADS)
def test_padding_layers_match_paddle(real_paddle, build, shape):
    compare(real_paddle, lambda P: build(P.nn), r(*shape))


def test_padding_rejects_wrong_length():
    with pytest.raises(ValueError, match="6 numbers"):
        ours.nn.Pad3D([1, 2])
    with pytest.raises(TypeError, match="value"):
        ours.nn.ConstantPad2D(1)


@pytest.mark.parametrize(
    "name,args",
    [("relu_", ()), ("tanh_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)), ("softmax_", (0,)),
     ("hardtanh_", (-0.3, 0.3)), ("thresholded_relu_", (0.1,))],
)  # fmt: skip
def test_inplace_functional_matches_paddle(real_paddle, name, args):
    def build(P):
        def fn(x):
            y = x * 2.0
            out = getattr(P.nn.functional, name)(y, *args)
            return out * 1.0

        return fn

    compare(real_paddle, build, r(3, 4))
    x = ours.rand([2, 2])
    assert getattr(ours.nn.functional, name)(x, *args) is x


LOSSES = [
    lambda F, x, y: F.square_error_cost(x, y),
    lambda F, x, y: F.log_loss(F.sigmoid(x), (y > 0).astype("float32")),
    lambda F, x, y: F.soft_margin_loss(x, y.sign()),
    lambda F, x, y: F.soft_margin_loss(x, y.sign(), reduction="none"),
]


@pytest.mark.parametrize("fn", LOSSES)
def test_extra_losses_match_paddle(real_paddle, fn):
    compare(real_paddle, lambda P: lambda x, y: fn(P.nn.functional, x, y), r(3, 1), r(3, 1), rtol=1e-5, atol=1e-6)


def test_loss_layers_and_sequence_mask_match_paddle(real_paddle):
    a, b, c = r(4), r(4), np.sign(r(4)).astype("float32")
    compare(real_paddle, lambda P: lambda x, y, z: P.nn.MarginRankingLoss(0.2)(x, y, z), a, b, c)
    compare(real_paddle, lambda P: lambda x, z: P.nn.SoftMarginLoss("sum")(x, z), a, c)
    lengths = np.array([[1, 3], [0, 2]], "int64")
    for kwargs in ({}, {"maxlen": 5, "dtype": "float32"}):
        got = ours.nn.functional.sequence_mask(ours.to_tensor(lengths), **kwargs)
        want = real_paddle.nn.functional.sequence_mask(real_paddle.to_tensor(lengths), **kwargs)
        assert got.dtype == np.dtype(str(want.numpy().dtype))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
