"""3-D, Lp and unpooling (issue 30) against real Paddle 3.3.1: values, masks and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(30)
X5 = RNG.standard_normal((2, 3, 5, 6, 7))


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("max_pool3d", {"kernel_size": 2}),
        ("max_pool3d", {"kernel_size": (3, 2, 2), "stride": (2, 1, 2), "padding": 1}),
        ("max_pool3d", {"kernel_size": 2, "stride": 2, "ceil_mode": True}),
        ("max_pool3d", {"kernel_size": 2, "padding": "SAME"}),
        ("avg_pool3d", {"kernel_size": 2}),
        ("avg_pool3d", {"kernel_size": 3, "stride": 2, "padding": [1, 0, 1, 1, 0, 1], "exclusive": False}),
        ("avg_pool3d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
        ("avg_pool3d", {"kernel_size": 2, "divisor_override": 3}),
        ("adaptive_avg_pool3d", {"output_size": (2, 3, 4)}),
        ("adaptive_avg_pool3d", {"output_size": [None, 2, 3]}),
        ("adaptive_max_pool3d", {"output_size": 3}),
    ],
)
def test_3d_pooling_matches_paddle(real_paddle, name, kwargs):
    compare(real_paddle, lambda P: lambda t: getattr(P.nn.functional, name)(t, **kwargs), X5)


def test_3d_pooling_channel_last_matches_paddle(real_paddle):
    x = np.moveaxis(X5, 1, -1).copy()
    for name in ("max_pool3d", "avg_pool3d"):
        compare(real_paddle, lambda P, n=name: lambda t: getattr(P.nn.functional, n)(t, 2, data_format="NDHWC"), x)


@pytest.mark.parametrize("adaptive", [False, True])
def test_3d_max_masks_and_unpool_match_paddle(real_paddle, adaptive):
    def pooled(P, t):
        F = P.nn.functional
        return F.adaptive_max_pool3d(t, 2, return_mask=True) if adaptive else F.max_pool3d(t, 2, return_mask=True)

    compare(real_paddle, lambda P: lambda t: pooled(P, t)[1], X5)
    if not adaptive:  # unpooling inverts a fixed-window pool
        unpool = lambda P: lambda t: P.nn.functional.max_unpool3d(*pooled(P, t), 2, output_size=X5.shape)  # noqa: E731
        compare(real_paddle, unpool, X5)


@pytest.mark.parametrize(("n", "shape"), [(1, (2, 3, 8)), (2, (2, 3, 6, 8))])
def test_unpool_matches_paddle(real_paddle, n, shape):
    x = RNG.standard_normal(shape)

    def build(P):
        F = P.nn.functional
        pool, unpool = getattr(F, f"max_pool{n}d"), getattr(F, f"max_unpool{n}d")
        return lambda t: unpool(*pool(t, 2, return_mask=True), 2, output_size=None)

    compare(real_paddle, build, x)


@pytest.mark.parametrize(("name", "x", "args"), [
    ("lp_pool1d", RNG.uniform(0.1, 2, (2, 3, 9)), (2.0, 3, 2)),
    ("lp_pool2d", RNG.uniform(0.1, 2, (2, 3, 6, 7)), (3.0, 2)),
    ("lp_pool2d", RNG.uniform(0.1, 2, (2, 3, 6, 7)), (float("inf"), 3, 2)),
])  # fmt: skip
def test_lp_pooling_matches_paddle(real_paddle, name, x, args):
    compare(real_paddle, lambda P: lambda t: getattr(P.nn.functional, name)(t, *args), x)


def test_layers_hold_the_functional_arguments(real_paddle):
    for cls, args in (("MaxPool3D", (2,)), ("AvgPool3D", (2,)), ("AdaptiveAvgPool3D", (2,)), ("LPPool2D", (2.0, 2))):
        x = X5 if "3D" in cls else X5[:, :, 0]
        got = getattr(ours.nn, cls)(*args)(ours.to_tensor(x)).numpy()
        want = getattr(real_paddle.nn, cls)(*args)(real_paddle.to_tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_bad_inputs_name_the_fix():
    with pytest.raises(ShapeError, match="5-D input"):
        ours.nn.functional.max_pool3d(ours.ones([2, 3, 4, 4]), 2)
    with pytest.raises(ShapeError, match="data_format"):
        ours.nn.functional.avg_pool3d(ours.ones([1, 1, 2, 2, 2]), 2, data_format="NCHW")
