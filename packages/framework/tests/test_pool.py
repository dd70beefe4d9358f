"""Max/avg/adaptive pooling and their layers: real Paddle parity, finite differences, masks, errors."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import functional, layer

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

F = paddle.nn.functional
rng = np.random.default_rng(11)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


WINDOWS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=[2, 3], stride=[1, 2], padding=[1, 0, 0, 1]),
    dict(kernel_size=3, stride=2, padding=[[0, 0], [0, 0], [1, 1], [0, 1]]),
    dict(kernel_size=3, stride=2, padding="SAME"),
    dict(kernel_size=2, stride=1, padding="VALID"),
    dict(kernel_size=3, stride=2, padding=1, data_format="NHWC"),
]


@pytest.mark.parametrize("kwargs", WINDOWS, ids=str)
def test_max_pool2d_matches_paddle(real_paddle, kwargs):
    functional(real_paddle, "max_pool2d", randn(2, 3, 7, 6), **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [*WINDOWS, dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, exclusive=False),
     dict(kernel_size=3, padding=1, exclusive=False), dict(kernel_size=2, divisor_override=3)],
    ids=str,
)  # fmt: skip
def test_avg_pool2d_matches_paddle(real_paddle, kwargs):
    functional(real_paddle, "avg_pool2d", randn(2, 3, 7, 6), **kwargs)


@pytest.mark.parametrize(
    "name, kwargs",
    [("max_pool1d", dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)), ("max_pool1d", dict(kernel_size=2)),
     ("avg_pool1d", dict(kernel_size=2, padding=1, exclusive=False)), ("avg_pool1d", dict(kernel_size=3, stride=2)),
     ("adaptive_avg_pool1d", dict(output_size=4)), ("adaptive_max_pool1d", dict(output_size=4)),
     ("adaptive_avg_pool1d", dict(output_size=1))],
    ids=str,
)  # fmt: skip
def test_pool1d_matches_paddle(real_paddle, name, kwargs):
    functional(real_paddle, name, randn(2, 3, 9), **kwargs)


@pytest.mark.parametrize(
    "name, kwargs",
    [("adaptive_avg_pool2d", dict(output_size=(3, 4))), ("adaptive_avg_pool2d", dict(output_size=1)),
     ("adaptive_avg_pool2d", dict(output_size=[None, 2])), ("adaptive_avg_pool2d", dict(output_size=3, data_format="NHWC")),
     ("adaptive_max_pool2d", dict(output_size=(4, 5))), ("adaptive_max_pool2d", dict(output_size=1))],
    ids=str,
)  # fmt: skip
def test_adaptive_pool2d_matches_paddle(real_paddle, name, kwargs):
    functional(real_paddle, name, randn(2, 3, 7, 6), **kwargs)


def test_masks_match_paddle(real_paddle):
    x = randn(2, 3, 7, 6)
    for fn, kwargs in [
        ("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
        ("adaptive_max_pool2d", dict(output_size=3)),
    ]:
        out, mask = getattr(F, fn)(paddle.to_tensor(x), return_mask=True, **kwargs)
        ref_out, ref_mask = getattr(real_paddle.nn.functional, fn)(real_paddle.to_tensor(x), return_mask=True, **kwargs)
        np.testing.assert_array_equal(mask.numpy(), ref_mask.numpy())
        assert mask.dtype == np.int32
        np.testing.assert_array_equal(out.numpy(), ref_out.numpy())
    ties = rng.integers(0, 3, (2, 3, 8, 6)).astype("float32")  # the 2x2 kernel keeps the first maximum
    out, mask = F.max_pool2d(paddle.to_tensor(ties), 2, return_mask=True)
    ref_out, ref_mask = real_paddle.nn.functional.max_pool2d(real_paddle.to_tensor(ties), 2, return_mask=True)
    np.testing.assert_array_equal(mask.numpy(), ref_mask.numpy())
    np.testing.assert_array_equal(out.numpy(), ref_out.numpy())
    out, mask = F.max_pool1d(paddle.to_tensor(randn(2, 3, 8)), 2, return_mask=True)
    assert out.shape == mask.shape == [2, 3, 4]


def test_gradients_by_finite_differences(gradcheck):
    # distinct values so the max is unique and differentiable
    x = rng.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) / 7.0
    gradcheck(lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True), x)
    gradcheck(lambda t: F.max_pool2d(t, 2), x)
    gradcheck(lambda t: F.avg_pool2d(t, [2, 3], [1, 2], [1, 0], ceil_mode=True, exclusive=False), x)
    gradcheck(lambda t: F.adaptive_avg_pool2d(t, (3, 4)), x)
    gradcheck(lambda t: F.adaptive_max_pool2d(t, (2, 4)), x)
    gradcheck(lambda t: F.avg_pool1d(t, 3, 2, 1), x[:, :, 0])


def test_non_contiguous_and_size_one(real_paddle):
    from _parity import compare

    def build(mod):
        return lambda t: mod.nn.functional.max_pool2d(mod.transpose(t, [0, 3, 1, 2]), 2)

    compare(real_paddle, build, randn(2, 6, 4, 3))
    functional(real_paddle, "avg_pool2d", randn(1, 1, 1, 1), kernel_size=1)
    functional(real_paddle, "max_pool2d", randn(1, 2, 3, 3), kernel_size=3)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: F.max_pool2d(paddle.to_tensor(randn(2, 3, 4)), 2), ShapeError),
        (lambda: F.max_pool2d(paddle.to_tensor(np.ones((1, 1, 4, 4), "int32")), 2), DTypeError),
        (lambda: F.avg_pool2d(paddle.to_tensor(randn(1, 1, 4, 4)), 2, padding=[1, 2, 3]), ShapeError),
        (lambda: F.max_pool2d(paddle.to_tensor(randn(1, 1, 4, 4)), 2, data_format="NCL"), ShapeError),
        (lambda: F.max_pool2d(paddle.to_tensor(randn(1, 1, 2, 2)), 2, padding=3), ShapeError),
        (lambda: F.adaptive_avg_pool2d(paddle.to_tensor(randn(1, 1, 4, 4)), 0), ShapeError),
        (lambda: F.max_pool1d(paddle.to_tensor(randn(1, 1, 4, 4)), 2), ShapeError),
    ],
)
def test_bad_input_raises_typed_error(call, error):
    with pytest.raises(error, match="pool"):
        call()


@pytest.mark.parametrize(
    "cls, args, kwargs, shape",
    [
        ("MaxPool2D", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 7, 7)),
        ("AvgPool2D", (3,), dict(stride=2, padding=1, exclusive=False), (2, 3, 7, 7)),
        ("MaxPool1D", (2,), {}, (2, 3, 8)),
        ("AvgPool1D", (3,), dict(stride=2, padding=1), (2, 3, 8)),
        ("AdaptiveAvgPool2D", (3,), {}, (2, 3, 7, 5)),
        ("AdaptiveAvgPool1D", (3,), {}, (2, 3, 8)),
        ("AdaptiveMaxPool2D", ((2, 3),), {}, (2, 3, 7, 5)),
        ("AdaptiveMaxPool1D", (3,), {}, (2, 3, 8)),
    ],
    ids=str,
)
def test_layers_match_paddle(real_paddle, cls, args, kwargs, shape):
    layer(real_paddle, cls, args, kwargs, randn(*shape))


def test_layer_return_mask():
    out, mask = paddle.nn.MaxPool2D(2, return_mask=True)(paddle.to_tensor(randn(1, 2, 4, 4)))
    assert out.shape == mask.shape == [1, 2, 2, 2]
