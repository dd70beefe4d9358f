"""conv1d / conv2d / conv2d_transpose and their layers: real Paddle parity, finite differences, errors."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from _parity import functional, layer, layer_pair

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

F = paddle.nn.functional
rng = np.random.default_rng(7)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


CONV2D_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=[2, 1], padding=[1, 2]),
    dict(padding=[1, 0, 2, 1]),  # top, bottom, left, right
    dict(padding=[[0, 0], [0, 0], [1, 2], [0, 1]]),
    dict(padding="SAME", stride=2),
    dict(padding="same", dilation=2),  # Paddle resets dilation to 1 for SAME
    dict(padding="VALID", stride=[1, 2]),
    dict(dilation=2, padding=2),
    dict(groups=2, padding=1),
]


@pytest.mark.parametrize("kwargs", CONV2D_CASES, ids=str)
def test_conv2d_matches_paddle(real_paddle, kwargs):
    functional(real_paddle, "conv2d", randn(2, 4, 9, 8), randn(6, 4 // kwargs.get("groups", 1), 3, 3), randn(6),
               rtol=1e-4, atol=1e-5, **kwargs)  # fmt: skip


def test_conv2d_depthwise_nhwc_and_no_bias(real_paddle):
    functional(real_paddle, "conv2d", randn(2, 7, 6, 4), randn(8, 1, 3, 3), groups=4, padding=1, data_format="NHWC",
               rtol=1e-4, atol=1e-5)  # fmt: skip
    functional(real_paddle, "conv2d", randn(1, 3, 5, 5), randn(2, 3, 5, 5), rtol=1e-4, atol=1e-5)  # 1x1 output


DIRECT_AND_POINTWISE_CASES = [  # (x, weight, kwargs): the direct depthwise kernels and the 1x1 GEMM-only path
    ((2, 4, 9, 8), (4, 1, 3, 3), dict(groups=4, stride=2, padding=1)),
    ((2, 4, 9, 8), (8, 1, 5, 5), dict(groups=4, padding=[2, 1], dilation=[1, 2])),  # multiplier 2
    ((1, 6, 7, 9), (6, 1, 3, 3), dict(groups=6, stride=[1, 2], padding="SAME")),
    ((2, 4, 2, 21), (4, 1, 5, 5), dict(groups=4, padding=2)),  # a row of 5 taps in one pass, 2-row planes
    ((2, 4, 9, 20), (4, 1, 5, 5), dict(groups=4, stride=[2, 1], padding=2)),  # the same on phase planes
    ((1, 3, 8, 11), (6, 1, 3, 3), dict(groups=3, stride=[2, 1], padding=1)),  # 3 taps, multiplier 2
    ((2, 4, 11, 13), (4, 1, 5, 5), dict(groups=4, stride=2, padding=2)),  # 5 taps over even/odd phases
    ((3, 1, 8, 8), (5, 1, 3, 3), dict(padding=1)),
    (
        (1, 2, 3, 2),
        (2, 1, 3, 3),
        dict(groups=2, stride=2, padding=2, dilation=2),
    ),  # taps entirely in padding  # one input channel: direct kernel, groups=1
    ((2, 6, 7, 9), (4, 6, 1, 1), dict()),
    ((2, 6, 7, 9), (4, 6, 1, 1), dict(stride=2)),
    ((1, 6, 7, 9), (6, 3, 1, 1), dict(stride=[2, 3], groups=2)),
    ((6, 8, 1, 1), (3, 8, 1, 1), dict()),  # one pixel per image (squeeze-excite): one GEMM
    ((2, 6, 3, 3), (4, 6, 1, 1), dict(stride=3)),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs", DIRECT_AND_POINTWISE_CASES, ids=str)
def test_depthwise_and_pointwise_match_paddle(real_paddle, x_shape, w_shape, kwargs):
    functional(real_paddle, "conv2d", randn(*x_shape), randn(*w_shape), randn(w_shape[0]), rtol=1e-4, atol=1e-5,
               **kwargs)  # fmt: skip


@pytest.mark.parametrize("kwargs", [dict(padding=1), dict(stride=[1, 2], padding=[1, 2]), dict(groups=3, stride=2)],
                         ids=str)  # fmt: skip
def test_wide_rows_match_paddle(real_paddle, kwargs):
    """Long rows, strided and not (weight gradients ~50, sums of 750 products: atol 1e-4)."""
    functional(real_paddle, "conv2d", randn(2, 3, 5, 75), randn(6, 3 // kwargs.get("groups", 1), 3, 3), randn(6),
               rtol=1e-4, atol=1e-4, **kwargs)  # fmt: skip


def test_depthwise_transpose_matches_paddle(real_paddle):
    functional(real_paddle, "conv2d_transpose", randn(2, 4, 5, 6), randn(4, 1, 3, 3), groups=4, stride=2, padding=1,
               rtol=1e-4, atol=1e-5)  # fmt: skip


def test_many_to_one_channel_transpose_matches_paddle(real_paddle):
    """A transposed conv into one channel (a detection head's last layer)."""
    functional(real_paddle, "conv2d_transpose", randn(2, 6, 5, 6), randn(6, 1, 2, 2), randn(1), stride=2,
               rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize("kernel", [(2, 2), (3, 2)], ids=str)
def test_non_overlapping_taps_match_paddle(real_paddle, kernel):
    """Kernel = stride, no padding: each pixel meets one tap, so the adjoint is a GEMM per image and
    a placement, or with few taps (2x2 here) their direct sums (a transposed conv's forward, a
    patchifying conv's input gradient)."""
    functional(real_paddle, "conv2d_transpose", randn(2, 5, 4, 3), randn(5, 3, *kernel), randn(3), stride=kernel,
               rtol=1e-4, atol=1e-5)  # fmt: skip
    functional(real_paddle, "conv2d", randn(2, 3, 4 * kernel[0], 3 * kernel[1]), randn(5, 3, *kernel), randn(5),
               stride=kernel, rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    "g_shape, w_shape",
    [((1, 24, 40, 64), (24, 1, 2, 2)), ((2, 6, 5, 7), (6, 3, 2, 2)), ((1, 5, 4, 9), (5, 1, 3, 3)),
     ((3, 4, 6, 5), (4, 2, 2, 4))],
    ids=str,
)  # fmt: skip
def test_few_non_overlapping_taps_sum_directly(real_paddle, monkeypatch, g_shape, w_shape):
    """A float32 transposed conv with kernel = stride and at most 16 taps per input pixel (PP-OCR
    det's 24 -> 1 last layer) sums each tap directly instead of a GEMM of a few rows: serial and
    parallel variants, batches, kw of 2 (the interleaved store) and others."""
    from paddlectl.framework.kernels import conv, conv_select

    calls = []
    placed = conv_select.placed_taps
    monkeypatch.setattr(conv_select, "placed_taps", lambda *a: calls.append(1) or placed(*a))
    monkeypatch.setattr(conv.placed_taps, "min_size", 1 if g_shape[0] == 1 else 1 << 40)
    x, w = randn(*g_shape, dtype="float32"), randn(*w_shape, dtype="float32")
    stride = w_shape[2:]
    with paddle.no_grad():
        got = F.conv2d_transpose(paddle.to_tensor(x), paddle.to_tensor(w), stride=stride).numpy()
    assert calls, "the direct path did not run"
    theirs = real_paddle.nn.functional.conv2d_transpose(
        real_paddle.to_tensor(x), real_paddle.to_tensor(w), stride=stride
    )
    np.testing.assert_allclose(got, theirs.numpy(), rtol=1e-4, atol=1e-4)


def test_conv2d_nhwc_with_bias_and_stride(real_paddle):
    functional(real_paddle, "conv2d", randn(2, 8, 7, 3), randn(4, 3, 3, 2), randn(4), stride=2, padding=[1, 0],
               data_format="NHWC", rtol=1e-4, atol=1e-5)  # fmt: skip


@pytest.mark.parametrize(
    "kwargs",
    [dict(), dict(stride=2, padding=1), dict(padding="same", stride=2), dict(padding=[1, 2], dilation=2),
     dict(groups=3, padding=1), dict(data_format="NLC", padding=1)],
    ids=str,
)  # fmt: skip
def test_conv1d_matches_paddle(real_paddle, kwargs):
    x = randn(2, 11, 6) if kwargs.get("data_format") == "NLC" else randn(2, 6, 11)
    functional(real_paddle, "conv1d", x, randn(9, 6 // kwargs.get("groups", 1), 3), randn(9), rtol=1e-4, atol=1e-5,
               **kwargs)  # fmt: skip


TRANSPOSE_CASES = [
    dict(),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=2, output_size=[12, 14]),
    dict(stride=[2, 3], padding=[1, 0], dilation=[1, 2]),
    dict(groups=2, stride=2),
    dict(padding="SAME", stride=2),
    dict(padding="VALID", stride=2),
    dict(data_format="NHWC", stride=2, padding=1),
]


@pytest.mark.parametrize("kwargs", TRANSPOSE_CASES, ids=str)
def test_conv2d_transpose_matches_paddle(real_paddle, kwargs):
    groups = kwargs.get("groups", 1)
    x = randn(2, 5, 6, 4) if kwargs.get("data_format") == "NHWC" else randn(2, 4, 5, 6)
    functional(real_paddle, "conv2d_transpose", x, randn(4, 6 // groups, 3, 3), randn(6), rtol=1e-4, atol=1e-5,
               **kwargs)  # fmt: skip


def test_conv_gradients_by_finite_differences(gradcheck):
    gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=[1, 0, 2, 1], dilation=[1, 2], groups=2),
              randn(2, 4, 6, 7), randn(4, 2, 2, 3), randn(4))  # fmt: skip
    gradcheck(lambda x, w: F.conv2d(x, w, padding=1, data_format="NHWC"), randn(1, 4, 5, 2), randn(3, 2, 3, 3))
    gradcheck(lambda x, w, b: F.conv2d_transpose(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
              randn(2, 4, 3, 4), randn(4, 1, 3, 3), randn(2))  # fmt: skip
    gradcheck(lambda x, w: F.conv1d(x, w, stride=2, padding=1), randn(2, 3, 7), randn(2, 3, 3))
    gradcheck(lambda x, w: F.conv2d(x, w, stride=2, padding=[1, 2], dilation=[2, 1], groups=3),
              randn(2, 3, 7, 6), randn(6, 1, 3, 2))  # fmt: skip
    gradcheck(lambda x, w: F.conv2d(x, w, stride=[2, 1]), randn(2, 3, 5, 4), randn(2, 3, 1, 1))


def test_non_contiguous_input(real_paddle):
    x = randn(2, 9, 8, 4)

    def build(mod):
        return lambda t, w: mod.nn.functional.conv2d(mod.transpose(t, [0, 3, 1, 2]), w, padding=1)

    from _parity import compare

    compare(real_paddle, build, x, randn(5, 4, 3, 3), rtol=1e-4, atol=1e-5)


def test_data_input_gets_no_gradient_and_weight_still_does():
    x = paddle.to_tensor(randn(2, 1, 6, 6))
    w = paddle.to_tensor(randn(3, 1, 3, 3), stop_gradient=False)
    F.conv2d(x, w, padding=1).sum().backward()
    assert x.grad is None
    assert w.grad is not None and w.grad.shape == [3, 1, 3, 3]


def test_float64_stays_float64():
    out = F.conv2d(
        paddle.to_tensor(randn(1, 2, 4, 4, dtype="float64")), paddle.to_tensor(randn(3, 2, 3, 3, dtype="float64"))
    )
    assert out.dtype == np.float64 and out.shape == [1, 3, 2, 2]


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 3, 5, 5)), paddle.to_tensor(randn(4, 2, 3, 3))), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 3, 2, 2)), paddle.to_tensor(randn(4, 3, 3, 3))), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(3, 5, 5)), paddle.to_tensor(randn(4, 3, 3, 3))), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(np.ones((1, 3, 5, 5), "int64")), paddle.to_tensor(randn(4, 3, 3, 3))), DTypeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 3, 5, 5)), paddle.to_tensor(randn(4, 3, 3, 3)), padding=[1, 2, 3]), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 3, 5, 5)), paddle.to_tensor(randn(4, 3, 3, 3)), padding="full"), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 4, 5, 5)), paddle.to_tensor(randn(3, 2, 3, 3)), groups=2), ShapeError),
        (lambda: F.conv2d(paddle.to_tensor(randn(1, 3, 5, 5)), paddle.to_tensor(randn(4, 3, 3, 3)), paddle.to_tensor(randn(3))), ShapeError),
        (lambda: F.conv2d_transpose(paddle.to_tensor(randn(1, 3, 4, 4)), paddle.to_tensor(randn(3, 2, 3, 3)), stride=2, output_size=[20, 20]), ShapeError),
        (lambda: F.conv2d_transpose(paddle.to_tensor(randn(1, 3, 4, 4)), paddle.to_tensor(randn(3, 2, 3, 3)), output_padding=1), ShapeError),
        (lambda: F.conv1d(paddle.to_tensor(randn(1, 3, 5)), paddle.to_tensor(randn(4, 3, 3)), data_format="NCHW"), ShapeError),
    ],
)  # fmt: skip
def test_bad_input_raises_typed_error(call, error):
    with pytest.raises(error, match=r"conv"):
        call()


# ----- layers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls, args, kwargs, shape",
    [
        ("Conv2D", (3, 6, 3), dict(stride=2, padding=1), (2, 3, 7, 7)),
        ("Conv2D", (4, 4, [3, 2]), dict(groups=4, padding="same", bias_attr=False), (2, 4, 5, 6)),
        ("Conv2D", (3, 5, 3), dict(padding=1, padding_mode="reflect"), (2, 3, 6, 6)),
        ("Conv2D", (3, 5, 3), dict(padding=1, data_format="NHWC"), (2, 6, 6, 3)),
        ("Conv1D", (3, 5, 3), dict(padding=2, dilation=2), (2, 3, 9)),
        ("Conv1D", (3, 5, 3), dict(padding=1, padding_mode="circular"), (2, 3, 9)),
        ("Conv2DTranspose", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), (2, 4, 4, 5)),
    ],
    ids=lambda v: str(v),
)
def test_layers_match_paddle(real_paddle, cls, args, kwargs, shape):
    layer(real_paddle, cls, args, kwargs, randn(*shape), rtol=1e-4, atol=1e-5)


def test_conv_transpose_layer_output_size(real_paddle):
    mine, theirs = layer_pair(real_paddle, "Conv2DTranspose", 2, 3, 3, stride=2)
    x = randn(1, 2, 4, 4)
    got = mine(paddle.to_tensor(x), output_size=[10, 10]).numpy()
    expected = theirs(real_paddle.to_tensor(x), output_size=[10, 10]).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_conv_layer_initialisation_follows_paddle():
    paddle.seed(3)
    conv = paddle.nn.Conv2D(16, 64, 5, groups=4)
    assert conv.weight.shape == [64, 4, 5, 5] and conv.bias.shape == [64]
    w = conv.weight.numpy()
    assert abs(w.mean()) < 0.01
    assert w.std() == pytest.approx(math.sqrt(2.0 / (16 * 25)), rel=0.05)  # in_channels, not per group
    assert not conv.bias.numpy().any()
    t = paddle.nn.Conv2DTranspose(4, 6, 3, groups=2)
    assert t.weight.shape == [4, 3, 3, 3]
    with pytest.raises(ValueError, match="divisible"):
        paddle.nn.Conv2D(3, 4, 3, groups=2)


def test_lenet_shapes_train():
    model = paddle.nn.Sequential(
        paddle.nn.Conv2D(1, 6, 5, padding=2), paddle.nn.MaxPool2D(2), paddle.nn.Conv2D(6, 16, 5),
        paddle.nn.MaxPool2D(2), paddle.nn.Flatten(), paddle.nn.Linear(16 * 5 * 5, 10),
    )  # fmt: skip
    out = model(paddle.to_tensor(randn(4, 1, 28, 28)))
    assert out.shape == [4, 10]
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize(
    "w_shape, kwargs",
    [
        ((6, 4, 3, 3), dict(padding=1)),
        ((6, 2, 3, 2), dict(stride=2, padding=[1, 0], groups=2, dilation=[1, 2])),
        ((6, 4, 3, 3), dict(stride=[2, 1], padding=[0, 0, 0, 2], dilation=[1, 2])),  # wide rows, one per run
        ((6, 4, 5, 5), dict()),  # wide rows read past the last image's plane
    ],
    ids=str,
)
def test_column_blocks_give_the_same_results(monkeypatch, w_shape, kwargs):
    """Columns built in many small blocks (rebuilt for the weight gradient) equal one block; wide
    (stride-1) rows included, whose blocks of rows add overlapping halos back in col2im."""
    from paddlectl.framework.kernels import conv_select, im2col

    monkeypatch.setattr(conv_select, "trains_on_pixels", lambda *a: False)  # columns even where tiles would run
    x, w = randn(3, 4, 9, 8), randn(*w_shape)

    def run():
        xt, wt = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(w, stop_gradient=False)
        out = F.conv2d(xt, wt, **kwargs)
        (out * out).sum().backward()
        return out.numpy(), xt.grad.numpy(), wt.grad.numpy()

    whole = run()
    monkeypatch.setattr(im2col, "_BLOCK_BYTES", 64)
    monkeypatch.setattr(im2col, "_KEEP_COLUMNS_BYTES", 0)
    for got, expected in zip(run(), whole, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [((3, 4, 9, 8), (6, 4, 3, 3), dict(padding=1)), ((2, 3, 12, 11), (5, 3, 3, 2), dict(padding=[2, 1, 0, 3], dilation=[2, 1])),
     ((1, 2, 16, 16), (3, 2, 5, 5), dict(padding="SAME"))],
    ids=str,
)  # fmt: skip
def test_shifted_gemm_forward_matches_paddle(real_paddle, monkeypatch, x_shape, w_shape, kwargs):
    """Without a weight gradient, small stride-1 convolutions that pixel tiles leave (float64 here, as
    dilated ones) run as shifted GEMMs (no columns)."""
    from paddlectl.framework.kernels import conv_select as conv_ops

    calls = []
    shifted = conv_ops._shifted_forward
    monkeypatch.setattr(conv_ops, "_shifted_forward", lambda *a: calls.append(1) or shifted(*a))
    x, w = randn(*x_shape, dtype="float64"), randn(*w_shape, dtype="float64")
    with paddle.no_grad():
        got = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), **kwargs).numpy()
    assert calls, "the shifted-GEMM path did not run"
    expected = real_paddle.nn.functional.conv2d(real_paddle.to_tensor(x), real_paddle.to_tensor(w), **kwargs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _conv2d_against_paddle(real_paddle, x_shape, w_shape, kwargs, dtype="float32", atol=1e-4):
    """Our ``F.conv2d`` without gradients of random inputs (and a bias where ``kwargs`` has
    ``bias=True``), checked against real Paddle's; ours as an array."""
    kwargs = dict(kwargs)
    x, w = randn(*x_shape, dtype=dtype), randn(*w_shape, dtype=dtype)
    b = randn(w_shape[0], dtype=dtype) if kwargs.pop("bias", False) else None
    with paddle.no_grad():
        got = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), None if b is None else paddle.to_tensor(b), **kwargs)
    theirs = real_paddle.nn.functional.conv2d(
        real_paddle.to_tensor(x), real_paddle.to_tensor(w), None if b is None else real_paddle.to_tensor(b), **kwargs
    )
    np.testing.assert_allclose(got.numpy(), theirs.numpy(), rtol=1e-4, atol=atol)
    return got.numpy()


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [((2, 5, 9, 13), (7, 5, 3, 3), dict(padding=1)), ((3, 4, 6, 5), (3, 4, 3, 3), dict()),
     ((1, 3, 1, 1), (1, 3, 3, 3), dict(padding=1)), ((2, 8, 7, 4), (5, 8, 3, 3), dict(padding=[2, 0, 1, 2])),
     ((1, 6, 40, 37), (4, 6, 3, 3), dict(padding="SAME")), ((1, 2, 3, 3), (2, 2, 3, 3), dict(padding=1, bias=True)),
     ((2, 3, 17, 20), (5, 3, 3, 3), dict(stride=2, padding=1)), ((1, 4, 9, 8), (3, 4, 3, 3), dict(stride=[2, 1], padding=[0, 2, 1, 0])),
     ((2, 3, 8, 11), (6, 3, 3, 3), dict(stride=[1, 2])), ((1, 2, 2, 2), (1, 2, 3, 3), dict(stride=2, padding=1)),
     ((1, 2, 70, 64), (3, 2, 3, 3), dict(padding=1)), ((1, 2, 130, 100), (2, 2, 3, 3), dict(stride=2, padding=1)),
     ((2, 6, 14, 14), (16, 6, 5, 5), dict()), ((1, 3, 9, 12), (5, 3, 5, 5), dict(stride=2, padding=[2, 1, 0, 3])),
     ((1, 2, 80, 60), (3, 2, 1, 5), dict(padding=[0, 2])), ((1, 4, 7, 9), (2, 4, 3, 5), dict(stride=[1, 2], padding=1))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_direct_forward_matches_paddle(real_paddle, monkeypatch, x_shape, w_shape, kwargs, dtype):
    """Without a weight gradient, 3x3 and kh x 5 layers with few outputs run the direct kernel:
    strides 1 and 2 (phase planes), output counts not a multiple of four, asymmetric padding,
    several bands of rows, a 1x1 image."""
    from paddlectl.framework.kernels import conv_select as conv_ops

    calls = []
    direct = conv_ops.conv_direct
    monkeypatch.setattr(conv_ops, "conv_direct", lambda *a: calls.append(1) or direct(*a))
    monkeypatch.setattr(conv_ops, "_DIRECT_MIN_OUTPUTS", 1)
    monkeypatch.setattr(conv_ops, "threaded", lambda: True)
    monkeypatch.setattr(conv_ops, "_shifts_pay", lambda *a: False)
    monkeypatch.setattr(conv_ops, "pixels_pay", lambda *a: False)
    got = _conv2d_against_paddle(real_paddle, x_shape, w_shape, kwargs, dtype, atol=1e-5)
    assert calls, "the direct 3x3 path did not run"
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [((2, 8, 17, 20), (5, 8, 3, 3), dict(padding=1)), ((1, 9, 33, 30), (12, 9, 3, 3), dict(padding=[0, 2, 1, 0])),
     ((1, 16, 200, 180), (24, 16, 3, 3), dict(padding=1, bias=True)), ((1, 8, 41, 23), (32, 8, 3, 3), dict()),
     ((3, 10, 12, 9), (17, 10, 3, 3), dict(padding="SAME")), ((1, 8, 2, 2), (8, 8, 3, 3), dict(padding=1)),
     ((2, 12, 19, 24), (61, 12, 3, 3), dict(padding=1))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("band_bytes", [1, 1 << 30], ids=["bands", "one"])
@pytest.mark.parametrize("stride", [1, 2])
def test_register_tiles_match_paddle(real_paddle, monkeypatch, x_shape, w_shape, kwargs, band_bytes, stride):
    """Float32 3x3 layers (stride 1 and 2) with few outputs run as register tiles: 8 / 16 / 24 channels a
    tile, 16-channel panels (32, 61), outputs not a multiple of 8, batches, asymmetric padding, bands
    of four rows or the whole image, the parallel variant (a 576k-element input)."""
    from paddlectl.framework.kernels import conv_select as conv_ops
    from paddlectl.framework.kernels import conv_tiles

    calls = []
    tiles = conv_tiles.conv2d
    monkeypatch.setattr(conv_tiles, "conv2d", lambda *a: calls.append(1) or tiles(*a))
    monkeypatch.setattr(conv_tiles, "BAND_BYTES", band_bytes)
    monkeypatch.setattr(conv_ops, "_TILES_MIN_MACS", 1)
    monkeypatch.setattr(conv_ops, "_shifts_pay", lambda *a: False)  # small stride-1 images: shifted GEMMs
    monkeypatch.setattr(conv_ops, "pixels_pay", lambda *a: False)  # wide stride-1 rows: pixel tiles
    _conv2d_against_paddle(real_paddle, x_shape, w_shape, dict(kwargs, stride=stride))
    assert calls, "the register-tile path did not run"


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs",
    [((1, 96, 20, 40), (24, 96, 3, 3), dict(padding=1, bias=True)), ((2, 8, 17, 70), (5, 8, 3, 3), dict(padding=1)),
     ((1, 9, 33, 30), (13, 9, 3, 3), dict(padding=[0, 2, 1, 0])), ((3, 10, 12, 41), (17, 10, 3, 3), dict(padding="SAME")),
     ((1, 3, 40, 50), (64, 3, 7, 7), dict(padding=3)), ((2, 16, 9, 64), (12, 16, 5, 5), dict(padding=2)),
     ((6, 32, 1, 40), (20, 32, 1, 3), dict(padding=[0, 0, 1, 1])), ((1, 4, 6, 26), (36, 4, 3, 3), dict()),
     ((1, 8, 2, 2), (8, 8, 3, 3), dict(padding=[1, 1, 24, 24]))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("band_bytes", [1, 1 << 30], ids=["bands", "one"])
@pytest.mark.parametrize("stride", [1, 2, (2, 1), (1, 2)], ids=str)
def test_pixel_tiles_match_paddle(real_paddle, monkeypatch, x_shape, w_shape, kwargs, band_bytes, stride):
    """Float32 layers of strides 1 and 2 with rows of at least 24 outputs run as pixel tiles: rows a
    whole number of tiles or not, channels a whole number of tile rows or not, each tile shape,
    3x3 / 5x5 / 7x7 / 1x3 kernels, batches, asymmetric padding (rows that are all padding), odd and
    even left padding at a column stride of 2, bands of four rows or the whole image, serial and
    parallel variants."""
    from paddlectl.framework.kernels import conv_select as conv_ops
    from paddlectl.framework.kernels import pixel_tiles

    calls = []
    tiles = pixel_tiles.conv2d
    monkeypatch.setattr(pixel_tiles, "conv2d", lambda *a: calls.append(1) or tiles(*a))
    monkeypatch.setattr(pixel_tiles, "BAND_BYTES", band_bytes)
    monkeypatch.setattr(pixel_tiles, "PARALLEL_MIN_MACS", 1 if band_bytes == 1 else 1 << 40)
    strides = (stride, stride) if isinstance(stride, int) else stride
    x_shape = (*x_shape[:3], (x_shape[3] - 1) * strides[1] + 1)  # as wide an output at either column stride
    got = _conv2d_against_paddle(real_paddle, x_shape, w_shape, dict(kwargs, stride=stride))
    assert calls, "the pixel-tile path did not run"
    x, w = np.zeros(x_shape, np.float32), np.zeros(w_shape, np.float32)
    assert conv_ops.pixels_pay(x, w, strides, (1, 1), 1, got.shape[2:])


@pytest.mark.parametrize(
    "stride, x_shape, w_shape, pads",
    [(1, (1, 16, 7, 7), (40, 16, 3, 3), (1, 1, 1, 1)), (1, (2, 8, 14, 14), (32, 8, 3, 3), (1, 1, 1, 1)),
     (1, (1, 6, 9, 11), (13, 6, 5, 5), (2, 2, 2, 2)), (1, (1, 5, 8, 10), (7, 5, 3, 3), (0, 2, 0, 1)),
     (1, (2, 4, 12, 9), (9, 4, 1, 3), (0, 0, 2, 0)), (1, (1, 3, 20, 28), (64, 3, 3, 3), (1, 1, 0, 2)),
     (1, (1, 12, 8, 8), (24, 12, 3, 3), (0, 0, 0, 0)),
     (2, (1, 16, 14, 14), (40, 16, 3, 3), (1, 1, 1, 1)), (2, (2, 8, 15, 13), (32, 8, 3, 3), (1, 1, 1, 1)),
     (2, (1, 6, 11, 9), (13, 6, 5, 5), (2, 2, 2, 2)), (2, (1, 5, 10, 12), (7, 5, 3, 3), (0, 2, 0, 1)),
     (2, (1, 4, 9, 20), (9, 4, 1, 3), (0, 0, 2, 0)), (2, (1, 12, 8, 8), (24, 12, 2, 2), (0, 0, 0, 0))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("band_bytes", [1, 1 << 30], ids=["bands", "one"])
def test_joined_pixel_tile_rows_match_paddle(real_paddle, monkeypatch, stride, x_shape, w_shape, pads, band_bytes):
    """Layers whose rows would leave tiles part empty run each band as one long row (tiles across row
    ends, the positions past a row dropped): at stride 1 rows that are not whole tiles, at stride 2
    rows under 24 outputs (their input rows split into even and odd planes as well as their
    columns). Narrow images, odd and even sizes, left padding 0, 1 and 2 (a row's last taps reading
    the next row's padding), 1x3, 2x2 and 5x5 kernels, batches, bands of four rows or the whole
    image, serial and parallel variants."""
    from paddlectl.framework.kernels import conv_select, pixel_tiles

    joined = []
    kernel = pixel_tiles.pixel_tiles
    monkeypatch.setattr(
        pixel_tiles, "pixel_tiles", SimpleNamespace(run=lambda *a: joined.append(a[-1]) or kernel.run(*a))
    )
    monkeypatch.setattr(pixel_tiles, "BAND_BYTES", band_bytes)
    monkeypatch.setattr(pixel_tiles, "PARALLEL_MIN_MACS", 1 if band_bytes == 1 else 1 << 40)
    x, w = randn(*x_shape), randn(*w_shape)
    outs = tuple(
        (s + p0 + p1 - k) // stride + 1
        for s, p0, p1, k in zip(x_shape[2:], pads[::2], pads[1::2], w_shape[2:], strict=True)
    )
    got = conv_select.pixel_conv(x, w, (stride, stride), pads, outs)
    assert joined == [True], "the joined pixel-tile path did not run"
    padding = [[0, 0], [0, 0], list(pads[:2]), list(pads[2:])]
    expected = real_paddle.nn.functional.conv2d(
        real_paddle.to_tensor(x), real_paddle.to_tensor(w), stride=stride, padding=padding
    )
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, tiled",
    [((4, 6, 14, 14), (16, 6, 5, 5), dict(), (2, 1)), ((2, 3, 9, 11), (5, 3, 3, 3), dict(padding=1), (2, 1)),
     ((1, 5, 8, 10), (20, 5, 3, 3), dict(padding=[0, 2, 0, 1]), (2, 1)), ((2, 4, 12, 9), (9, 4, 1, 3), dict(padding=[0, 2]), (2, 1)),
     ((1, 6, 9, 30), (40, 6, 5, 5), dict(padding=2), (2, 1)), ((1, 8, 2, 2), (8, 8, 3, 3), dict(padding=[1, 1, 24, 24]), (2, 1)),
     ((2, 3, 10, 61), (16, 3, 3, 3), dict(stride=2, padding=1), (1, 1)),
     ((1, 4, 10, 30), (7, 4, 2, 3), dict(stride=[2, 1], padding=[0, 1, 1, 0]), (1, 1)),
     ((3, 24, 20, 50), (40, 24, 3, 3), dict(stride=2, padding=[1, 0, 2, 1]), (5, 1)),
     ((4, 32, 23, 24), (48, 32, 3, 2), dict(stride=2, padding=1), (4, 0))],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("band_bytes", [1, 1 << 30], ids=["bands", "one"])
def test_training_on_pixel_tiles_matches_paddle(real_paddle, monkeypatch, x_shape, w_shape, kwargs, tiled, band_bytes):
    """Float32 layers of stride 1 (and of stride 2 with rows of 24 outputs or more) train without
    columns: the forward as pixel tiles, the weight gradient as ``weight_tiles``; the input gradient
    as pixel tiles of the flipped kernel over the output gradient (padded, or cropped where the
    padding passes the kernel's size), at stride 2 one per phase of the stride (from 4M
    multiply-adds; narrower rows keep their forward's columns, and the weight gradient uses them):
    narrow and wide rows, channels and taps not whole tiles, 1x3, 2x3, 3x2, 3x3 and 5x5 kernels,
    asymmetric padding, strides (2, 2) and (2, 1), bands of one row or the whole image, serial and
    parallel variants; with a bias. ``tiled``: the pixel-tile convolutions one step runs, and
    whether the weight gradient is weight tiles."""
    from paddlectl.framework.kernels import conv_select, pixel_tiles, weight_tiles

    calls = {"pixels": 0, "weights": 0}
    pixels, weights = conv_select.pixel_conv, weight_tiles.weight_grad
    monkeypatch.setattr(conv_select, "pixel_conv", lambda *a: calls.update(pixels=calls["pixels"] + 1) or pixels(*a))
    monkeypatch.setattr(weight_tiles, "weight_grad", lambda *a: calls.update(weights=1) or weights(*a))
    monkeypatch.setattr(pixel_tiles, "BAND_BYTES", band_bytes)  # the bands of both kinds of tiles
    monkeypatch.setattr(weight_tiles, "PARALLEL_MIN_MACS", 1 if band_bytes == 1 else 1 << 40)
    monkeypatch.setattr(weight_tiles, "free_cores", lambda: 2)  # split even beside a busy process
    x, w, b = randn(*x_shape), randn(*w_shape), randn(w_shape[0])
    results = []
    for lib in (paddle, real_paddle):
        tensors = [lib.to_tensor(a, stop_gradient=False) for a in (x, w, b)]
        out = lib.nn.functional.conv2d(*tensors, **kwargs)
        (out * lib.to_tensor(np.cos(np.arange(out.size, dtype=np.float32)).reshape(out.shape))).sum().backward()
        results.append([out.numpy()] + [t.grad.numpy() for t in tensors])
    assert (calls["pixels"], calls["weights"]) == tiled
    for got, expected in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_training_tiles_match_float64_columns_on_random_geometries(monkeypatch):
    """Forty random float32 layers (kernels 1x1 to 5x5, strides 1, 2, (1, 2) and (2, 1), padding
    0-4 per side, 1-40 channels, images 1x1 to 20x20, batches of 1-4): the weight gradient
    (``weight_tiles``) and the input gradient (pixel tiles, one per phase of the stride) against the
    float64 columns path."""
    from paddlectl.framework.kernels import conv_select, weight_tiles

    monkeypatch.setattr(conv_select, "PHASES_MIN_MACS", 0)  # phases for the small ones too
    cases, ran = np.random.default_rng(7), 0
    for _ in range(40):
        kernel = tuple(int(k) for k in cases.integers(1, 6, 2))
        stride = tuple(int(s) for s in cases.integers(1, 3, 2))
        pads = tuple(int(p) for p in cases.integers(0, 5, 4))
        n, (c, o) = int(cases.integers(1, 5)), (int(v) for v in cases.integers(1, 41, 2))
        size = [int(v) for v in cases.integers(1, 21, 2)]
        sides = zip(size, pads[::2], pads[1::2], kernel, stride, strict=True)
        outs = [(s + p0 + p1 - k) // st + 1 for s, p0, p1, k, st in sides]
        if min(outs) < 1:
            continue
        ran += 1
        x, w, g = randn(n, c, *size), randn(o, c, *kernel), randn(n, o, *outs)
        geometry = (stride, pads, (1, 1), 1)
        expected = conv_select.weight_grad(x.astype(np.float64), g.astype(np.float64), w.shape, *geometry)
        got = weight_tiles.weight_grad(x, g, kernel, stride, pads)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=str((x.shape, w.shape, geometry)))
        expected = conv_select.input_grad(g.astype(np.float64), w.astype(np.float64), x.shape, *geometry)
        got = conv_select._input_grad_by_phases(g, w, x.shape, stride, pads)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=str((x.shape, w.shape, geometry)))
    assert ran >= 30, "too few of the drawn geometries were valid convolutions"


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_weight_tiles_sum_the_same_on_any_number_of_threads(monkeypatch, threads):
    """Each tile of the weight gradient is one task's, over every band in the same order: the bits do
    not depend on how many threads split the tiles."""
    from paddlectl.framework.kernels import weight_tiles

    x, g = randn(3, 5, 11, 13), randn(3, 40, 11, 13)
    expected = weight_tiles.weight_grad(x, g, (3, 3), (1, 1), (1, 1, 1, 1))
    monkeypatch.setattr(weight_tiles, "PARALLEL_MIN_MACS", 1)
    monkeypatch.setattr(weight_tiles, "free_cores", lambda: 2)  # split even beside a busy process
    monkeypatch.setattr(weight_tiles, "numba", SimpleNamespace(get_num_threads=lambda: threads))
    np.testing.assert_array_equal(weight_tiles.weight_grad(x, g, (3, 3), (1, 1), (1, 1, 1, 1)), expected)


def test_training_keeps_columns_for_narrow_stride_2_and_other_layers():
    from paddlectl.framework.kernels.conv_select import _phases_pay, trains_on_pixels

    x, w = np.zeros((2, 8, 16, 16), np.float32), np.zeros((16, 8, 3, 3), np.float32)
    assert trains_on_pixels(x, w, (1, 1), (1, 1), 1, (14, 14))  # narrow rows at stride 1
    assert trains_on_pixels(x, w, (2, 2), (1, 1), 1, (8, 24))
    assert not trains_on_pixels(x, w, (2, 2), (1, 1), 1, (8, 8))  # columns + GEMM win there
    assert not trains_on_pixels(x, w, (1, 1), (2, 2), 1, (12, 12))
    assert not trains_on_pixels(x, w, (1, 1), (1, 1), 2, (14, 14))
    assert not trains_on_pixels(x, w[:, :, :1, :1], (1, 1), (1, 1), 1, (16, 16))
    assert not trains_on_pixels(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), 1, (14, 14))
    g = np.zeros((2, 16, 16, 16), np.float32)
    assert _phases_pay(g, w, (1, 1), (1, 1), 1)
    assert not _phases_pay(g[:, :, :8, :8], w, (2, 2), (1, 1), 1)  # 1.2M multiply-adds: col2im
    assert _phases_pay(np.zeros((16, 16, 16, 16), np.float32), w, (2, 2), (1, 1), 1)  # 4.7M
    assert not _phases_pay(g, w, (1, 1), (2, 2), 1)
    assert not _phases_pay(g, w[:, :, :1, :1], (1, 1), (1, 1), 1)  # 1x1: one GEMM


@pytest.mark.parametrize("out_channels, width", [(24, 160), (48, 48), (5, 70), (13, 30), (64, 50), (1, 1), (200, 96)])
def test_pixel_tiles_pick_the_shape_that_pads_fewest_outputs(out_channels, width):
    from paddlectl.framework.kernels import pixel_tiles

    def padded(rows, vectors):
        return (
            -(-out_channels // rows) * rows * -(-width // (vectors * pixel_tiles.LANES)) * vectors * pixel_tiles.LANES
        )

    chosen = pixel_tiles.vectors_for(out_channels, width)
    least = min(padded(*shape) for shape in pixel_tiles.SHAPES)
    assert padded(*pixel_tiles.SHAPES[chosen - 1]) == least
    if padded(*pixel_tiles.SHAPES[1]) == least:
        assert chosen == 2  # the middle shape on a tie


@pytest.mark.parametrize("rows", [24, 12, 8])
def test_pixel_tile_weights_are_packed_per_tile_height(rows):
    """Each tile reads its own channels' weights as one contiguous run per (channel, tap): group g of
    ``pack(w, rows)`` holds output channels g*rows.. side by side, zero past the last."""
    from paddlectl.framework.kernels import pixel_tiles

    w = randn(29, 3, 3, 3)
    packed = pixel_tiles.pack(w, rows)
    assert packed.shape == (-(-29 // rows), 27, rows)
    for o in range(29):
        np.testing.assert_array_equal(packed[o // rows, :, o % rows], w[o].reshape(-1))
    assert not packed[-1, :, 29 % rows or rows :].any()


def test_pixel_tiles_leave_strided_narrow_pointwise_and_float64_layers_alone():
    from paddlectl.framework.kernels.conv_select import pixels_pay

    x, w = np.zeros((1, 96, 80, 160), np.float32), np.zeros((24, 96, 3, 3), np.float32)
    assert pixels_pay(x, w, (1, 1), (1, 1), 1, (80, 160))
    assert pixels_pay(x, w, (2, 1), (1, 1), 1, (40, 160))
    assert not pixels_pay(x, w, (3, 3), (1, 1), 1, (27, 54))
    assert not pixels_pay(x, w, (1, 1), (2, 2), 1, (78, 158))
    assert not pixels_pay(x, w, (1, 1), (1, 1), 2, (80, 160))
    assert not pixels_pay(x[:, :, :, :20], w, (2, 1), (1, 1), 1, (40, 20))  # rows narrower than a tile...
    assert pixels_pay(x[:, :, :, :20], w, (1, 1), (1, 1), 1, (80, 20))  # ... but at stride 1 as joined bands
    assert pixels_pay(x[:, :, :14, :14], w, (2, 2), (1, 1), 1, (7, 7))  # ... and at stride 2
    assert not pixels_pay(x[:, :, :9, :9], w, (2, 2), (1, 1), 1, (5, 5))  # too few pixels for them
    assert not pixels_pay(x[:, :, :5, :5], w, (1, 1), (1, 1), 1, (5, 5))
    assert not pixels_pay(x, w[:, :, :1, :1], (1, 1), (1, 1), 1, (80, 160))  # 1x1: one GEMM
    assert not pixels_pay(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), 1, (80, 160))


def test_register_tiles_leave_small_or_shallow_layers_and_float64_alone():
    from paddlectl.framework.kernels.conv_select import _tiles_pay

    big = np.zeros((1, 48, 368, 368), np.float32)
    w = np.zeros((24, 48, 3, 3), np.float32)
    assert _tiles_pay(big, w, (2, 2), (1, 1), 1, (184, 184))
    assert _tiles_pay(big, w, (1, 1), (1, 1), 1, (368, 368))
    assert not _tiles_pay(big, w, (2, 1), (1, 1), 1, (184, 368))
    assert not _tiles_pay(big[:, :3], w[:, :3], (2, 2), (1, 1), 1, (184, 184))  # 27 taps: too short
    assert not _tiles_pay(big[:, :, :32, :32], w, (2, 2), (1, 1), 1, (16, 16))  # too small to pay
    assert not _tiles_pay(big.astype(np.float64), w.astype(np.float64), (2, 2), (1, 1), 1, (184, 184))
    assert not _tiles_pay(big, np.zeros((96, 48, 3, 3), np.float32), (2, 2), (1, 1), 1, (184, 184))  # GEMM


@pytest.mark.parametrize("block_bytes", [64, 4096, 1 << 21], ids=["rows", "images", "one"])
@pytest.mark.parametrize(
    "w_shape, kwargs", [((5, 4, 1, 1), dict()), ((5, 4, 1, 1), dict(stride=2)), ((5, 4, 3, 3), dict(padding=1, stride=2))],
    ids=str,
)  # fmt: skip
def test_inference_paths_match_paddle(real_paddle, monkeypatch, block_bytes, w_shape, kwargs):
    """Without gradients: 1x1 as one GEMM per image, and column blocks written straight into the
    NCHW output whether a block is rows of one image or several whole images."""
    from paddlectl.framework.kernels import im2col

    monkeypatch.setattr(im2col, "_BLOCK_BYTES", block_bytes)
    x, w = randn(3, 4, 9, 8), randn(*w_shape)
    with paddle.no_grad():
        got = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), **kwargs).numpy()
    expected = real_paddle.nn.functional.conv2d(real_paddle.to_tensor(x), real_paddle.to_tensor(w), **kwargs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_one_channel_weight_grad_float32_sums_stay_accurate():
    """The direct 1-channel weight gradient sums each plane's products in float32 (vectorised partial
    sums) and the planes in float64: LeNet's conv1 gradient matches a float64 computation."""
    x, w, g = randn(64, 1, 28, 28), randn(6, 1, 3, 3), randn(64, 6, 28, 28)
    grads = []
    for dtype in ("float32", "float64"):
        xt = paddle.to_tensor(x.astype(dtype))
        wt = paddle.to_tensor(w.astype(dtype), stop_gradient=False)
        (F.conv2d(xt, wt, padding=1) * paddle.to_tensor(g.astype(dtype))).sum().backward()
        grads.append(wt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=2e-5, atol=1e-3)


@pytest.mark.parametrize(
    "x_shape, w_shape, pads",
    [((3, 6, 2, 2), (5, 6, 3, 3), (1, 1, 1, 1)), ((1, 4, 1, 2), (3, 4, 3, 3), (1, 1, 1, 1)),
     ((2, 3, 1, 1), (4, 3, 3, 3), (1, 1, 1, 1)), ((2, 5, 2, 2), (3, 5, 5, 5), (2, 2, 2, 2)),
     ((2, 3, 3, 2), (4, 3, 3, 2), (0, 0, 1, 0)), ((1, 2, 2, 2), (2, 2, 3, 3), (2, 0, 0, 2))],
    ids=str,
)  # fmt: skip
def test_tap_gemms_equal_columns_on_tiny_planes(x_shape, w_shape, pads):
    """One GEMM per tap over the outputs it reaches (the lowered path for planes of up to 4 outputs)
    equals the column path, asymmetric padding and kernels larger than the image included."""
    from paddlectl.framework.kernels import conv_select as conv_ops
    from paddlectl.framework.ops import conv_inference

    x = rng.standard_normal(x_shape).astype("float32")
    w = rng.standard_normal(w_shape).astype("float32")
    outs = (x_shape[2] + pads[0] + pads[1] - w_shape[2] + 1, x_shape[3] + pads[2] + pads[3] - w_shape[3] + 1)
    assert conv_inference._tap_gemms_pay(w_shape, (1, 1), (1, 1), 1, outs)
    want = conv_ops.forward(x, w, (1, 1), pads, (1, 1), 1, outs)[0]
    got = conv_inference._tap_gemms(x, np.ascontiguousarray(w.transpose(2, 3, 0, 1)), pads, outs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tap_major_weights_are_kept_only_for_a_read_only_weight_and_dropped_with_it():
    import gc

    from paddlectl.framework.ops.conv_inference import _TAP_MAJOR, _tap_major

    w = rng.standard_normal((2, 3, 3, 3)).astype("float32")
    first = _tap_major(w)
    w[0, 0, 1, 1] = 100.0  # a writeable weight may change between calls: never served stale
    assert _tap_major(w)[1, 1, 0, 0] == 100.0 and _tap_major(w) is not _tap_major(w)
    w.flags.writeable = False
    assert _tap_major(w) is _tap_major(w) and first.shape == (3, 3, 2, 3) and id(w) in _TAP_MAJOR
    key = id(w)
    del w
    gc.collect()
    assert key not in _TAP_MAJOR


def test_winograd_in_chunks_of_images_equals_one_pass(monkeypatch):
    """A batch split into chunks (two images each and a last single one) gives the one-pass result."""
    from paddlectl.framework.kernels import conv_select as conv_ops
    from paddlectl.framework.kernels import winograd
    from paddlectl.framework.ops import conv_inference

    x = rng.standard_normal((5, 8, 10, 7)).astype("float32")
    w = rng.standard_normal((6, 8, 3, 3)).astype("float32")
    u, pads, outs = winograd.weights(w), (1, 1, 1, 0), (10, 6)
    whole = conv_inference._winograd(x, u, pads, outs)
    per_image = 16 * 8 * 5 * 3 * 4  # channels x tiles x float32
    monkeypatch.setattr(conv_inference, "_WINOGRAD_CHUNK_BYTES", 2 * per_image)
    chunked = conv_inference._winograd(x, u, pads, outs)
    np.testing.assert_allclose(chunked, whole, rtol=1e-6, atol=1e-6 * np.abs(whole).max())
    plain = conv_ops.forward(x, w, (1, 1), pads, (1, 1), 1, outs)[0]
    np.testing.assert_allclose(chunked, plain, rtol=1e-4, atol=1e-5 * np.abs(plain).max())


@pytest.mark.parametrize("rows", [1, 2, 5])
def test_winograd_in_chunks_of_tile_rows_equals_one_pass(monkeypatch, rows):
    """Tile-row chunks (one thread's path for large images and few outputs): top padding on the first
    chunk only, rows past the image as zeros, an odd last chunk; equal to the whole-image pass."""
    from paddlectl.framework.kernels import winograd
    from paddlectl.framework.ops import conv_inference

    x = rng.standard_normal((2, 5, 19, 8)).astype("float32")
    w = rng.standard_normal((3, 5, 3, 3)).astype("float32")
    u, pads = winograd.weights(w), (2, 1, 1, 0)
    outs = (19 + 3 - 2, 8 + 1 - 2)
    whole = conv_inference._winograd(x, u, pads, outs)
    monkeypatch.setattr(conv_inference, "_WINOGRAD_ROW_CHUNK_BYTES", 1)
    monkeypatch.setattr(conv_inference, "_WINOGRAD_MIN_ROWS", rows)
    np.testing.assert_allclose(conv_inference._winograd_rows(x, u, pads, outs), whole, rtol=1e-6, atol=1e-6)


def test_winograd_picks_tile_rows_on_one_thread_and_the_plain_conv_on_more(monkeypatch):
    """Few outputs (or a large image) take Winograd in tile-row chunks on one thread and the plain
    convolution (the direct kernel's even bands) on more; 32+ outputs on a small image the whole pass.
    Rows wide enough for pixel tiles take the plain convolution (pixel tiles) on more than one thread,
    and on one thread too for fewer than 32 outputs; narrower rows pixel tiles in joined rows on more
    than one thread, but for 64+ outputs over more than 8x8 pixels."""
    from paddlectl.framework.kernels import winograd
    from paddlectl.framework.ops import conv_inference

    calls = []
    for name in ("_winograd", "_winograd_rows", "forward", "pixel_conv"):
        real = getattr(conv_inference, name)
        monkeypatch.setattr(conv_inference, name, lambda *a, _n=name, _f=real: calls.append(_n) or _f(*a))
    cases = {12: [(8, False, "_winograd_rows"), (8, True, "pixel_conv"), (32, True, "pixel_conv"),
                  (64, True, "_winograd"), (32, False, "_winograd")],  # narrow rows
             40: [(8, False, "forward"), (32, False, "_winograd"), (32, True, "forward")]}  # fmt: skip
    for width, runs in cases.items():
        x = rng.standard_normal((1, 4, 12, width)).astype("float32")
        for o, threaded, path in runs:
            w = rng.standard_normal((o, 4, 3, 3)).astype("float32")
            monkeypatch.setattr(conv_inference, "threaded", lambda t=threaded: t)
            calls.clear()
            conv_inference._winograd_conv(x, w, winograd.weights(w), (1, 1, 1, 1), (12, width))
            assert calls == [path], (width, o, threaded)


@pytest.mark.parametrize(
    "x_shape, o, pads",
    [((2, 5, 9, 13), 7, (1, 1, 1, 1)), ((1, 3, 6, 5), 4, (0, 0, 0, 0)), ((1, 2, 1, 1), 3, (1, 1, 1, 1)),
     ((2, 4, 7, 4), 3, (2, 0, 1, 2)), ((3, 64, 16, 16), 32, (1, 1, 1, 1)), ((1, 16, 8, 11), 40, (1, 1, 0, 0))],
    ids=str,
)  # fmt: skip
def test_winograd_matches_a_float64_convolution(monkeypatch, x_shape, o, pads):
    """Winograd F(2x2, 3x3) (odd sizes, asymmetric padding, 1x1 images, batches) against a float64
    convolution: within 3x the float32 GEMM path's own error (or a few roundings, 5e-7 of the output's
    scale, on tiny layers) and under 2e-6 of the output's scale."""
    from paddlectl.framework.kernels import conv_select as conv_ops
    from paddlectl.framework.kernels import winograd
    from paddlectl.framework.ops import conv_inference

    monkeypatch.setattr(conv_inference, "_WINOGRAD_MIN_TILES", 1)
    monkeypatch.setattr(conv_ops, "_DIRECT_MAX_OUT", 0)  # the baseline is the GEMM path
    local = np.random.default_rng(11)  # its own draws: the bounds below are about rounding, so fixed data
    x = local.standard_normal(x_shape).astype("float32")
    w = (local.standard_normal((o, x_shape[1], 3, 3)) / np.sqrt(9 * x_shape[1])).astype("float32")
    outs = (x_shape[2] + pads[0] + pads[1] - 2, x_shape[3] + pads[2] + pads[3] - 2)
    truth = conv_ops.forward(x.astype(np.float64), w.astype(np.float64), (1, 1), pads, (1, 1), 1, outs)[0]
    plain = conv_ops.forward(x, w, (1, 1), pads, (1, 1), 1, outs)[0]
    scale = np.abs(truth).max()
    for run in (conv_inference._winograd, conv_inference._winograd_rows):  # whole images, tile rows
        got = run(x, winograd.weights(w), pads, outs)
        assert got.shape == truth.shape and got.dtype == np.float32
        err, plain_err = np.abs(got - truth).max(), np.abs(plain - truth).max()
        assert err <= max(3 * plain_err, 5e-7 * scale) and err <= 2e-6 * scale
