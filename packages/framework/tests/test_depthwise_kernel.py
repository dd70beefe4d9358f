"""The direct depthwise kernels (and the register tiles of ``depthwise_tiles``) against a plain NumPy
convolution and its adjoint, on the small planes where most tap rows read only the zero border
(PP-OCR cls: 2- and 3-row planes under 5x5 kernels) and on planes that end mid-tile."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.kernels import depthwise_tiles
from paddlectl.framework.kernels.conv import (
    _depthwise_input_grad_phases,
    depthwise,
    depthwise_input_grad,
    depthwise_weight_grad,
)

rng = np.random.default_rng(11)


def reference(x, w, stride, pads, dilation):
    """Zero-pad, then add every tap's strided window: no shared code with the kernel."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[0]), (pads[1], pads[1])))
    xp = np.repeat(xp, o // c, axis=1)
    oh = (h + 2 * pads[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pads[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    for i, j in itertools.product(range(kh), range(kw)):
        y, q = i * dilation[0], j * dilation[1]
        window = xp[:, :, y : y + (oh - 1) * stride[0] + 1 : stride[0], q : q + (ow - 1) * stride[1] + 1 : stride[1]]
        out += w[None, :, 0, i, j, None, None] * window
    return out


def reference_grads(x, w, g, stride, pads, dilation):
    """dx and dw of ``reference`` by its adjoint: every tap's strided window gets w * g added back,
    and dw is that window dotted with g."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = g.shape[2:]
    xp = np.repeat(np.pad(x, ((0, 0), (0, 0), (pads[0], pads[0]), (pads[1], pads[1]))), o // c, axis=1)
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    for i, j in itertools.product(range(kh), range(kw)):
        y, q = i * dilation[0], j * dilation[1]
        window = (
            Ellipsis,
            slice(y, y + (oh - 1) * stride[0] + 1, stride[0]),
            slice(q, q + (ow - 1) * stride[1] + 1, stride[1]),
        )
        dxp[window] += w[None, :, 0, i, j, None, None] * g
        dw[:, 0, i, j] = (xp[window] * g).sum(axis=(0, 2, 3))
    dx = dxp.reshape(n, c, o // c, *dxp.shape[2:]).sum(axis=2)
    return dx[:, :, pads[0] : pads[0] + h, pads[1] : pads[1] + wd], dw


def run(variant, x, w, stride, pads, dilation):
    want = reference(x, w, stride, pads, dilation)
    got = variant(x, w, *stride, *pads, *dilation, *want.shape[2:])
    return got, want


@pytest.mark.parametrize("variant", ["serial", "parallel"])
@pytest.mark.parametrize("stride", [(1, 1), (2, 1), (2, 2), (1, 2)], ids=str)
@pytest.mark.parametrize("k", [3, 5, 7])
@pytest.mark.parametrize("rows", [1, 2, 3, 6])
def test_small_planes_match_numpy(variant, stride, k, rows):
    x = rng.standard_normal((2, 4, rows, 13)).astype(np.float32)
    w = rng.standard_normal((4, 1, k, k)).astype(np.float32)
    got, want = run(getattr(depthwise, variant), x, w, stride, (k // 2, k // 2), (1, 1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("kernel", "stride", "pads", "dilation"),
    [
        ((3, 3), (1, 1), (2, 2), (2, 2)),  # dilated, stride 1
        ((3, 3), (2, 2), (2, 1), (2, 1)),  # dilated and strided
        ((5, 5), (3, 3), (1, 2), (1, 1)),  # three phases per axis
        ((1, 7), (1, 2), (0, 3), (1, 1)),  # 7 = a pass of 5 taps and two single taps
        ((7, 7), (1, 1), (3, 3), (1, 1)),  # a row of 7 adjacent taps in one pass
        ((7, 7), (1, 1), (1, 5), (1, 1)),  # the same, asymmetric padding
        ((2, 7), (1, 1), (0, 3), (1, 2)),  # dilated: 5 + 1 + 1
        ((2, 4), (1, 1), (0, 1), (1, 2)),  # no pass of 3 or 5 fits a row of 2; 4 = 3 + 1
        ((3, 3), (1, 1), (0, 0), (1, 1)),  # no padding: every tap row reads the image
        ((5, 5), (1, 1), (4, 4), (1, 1)),  # padding wider than the plane: whole output rows of zeros
    ],
    ids=str,
)
def test_geometries_match_numpy(kernel, stride, pads, dilation):
    x = rng.standard_normal((2, 3, 5, 9))
    w = rng.standard_normal((6, 1, *kernel))  # two outputs per input channel
    got, want = run(depthwise.serial, x, w, stride, pads, dilation)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("width", [8, 9, 4, 3])
@pytest.mark.parametrize("pad", [0, 1, 2, 3])
def test_stride_2_columns_fill_both_phases_and_their_borders(width, pad):
    """At column stride 2 both phases are filled in one pass where both read the image, and each
    alone at the borders (the left one starts or the right one ends a column early)."""
    x = rng.standard_normal((2, 3, 4, width))
    w = rng.standard_normal((3, 1, 3, 4))
    for variant in (depthwise.serial, depthwise.parallel):
        got, want = run(variant, x, w, (1, 2), (1, pad), (1, 1))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_buffers_reused_across_tasks_keep_a_zero_border():
    """A part runs many tasks through one buffer: a later, smaller-valued plane must not see an
    earlier plane's values where its padding should be zero."""
    x = np.zeros((1, 200, 2, 8), dtype=np.float32)
    x[0, ::2] = 1000.0  # every other channel large, the others zero
    w = np.ones((200, 1, 5, 5), dtype=np.float32)
    got, want = run(depthwise.serial, x, w, (1, 1), (2, 2), (1, 1))
    np.testing.assert_array_equal(got[0, 1::2], 0.0)
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("variant", ["serial", "parallel"])
@pytest.mark.parametrize("k", depthwise_tiles.KERNELS)
@pytest.mark.parametrize("stride", depthwise_tiles.STRIDES)
@pytest.mark.parametrize(("rows", "width"), [(1, 1), (3, 15), (4, 16), (5, 17), (9, 33), (2, 70), (6, 40), (16, 64)])
@pytest.mark.parametrize("pad", [0, 1, "k"])
def test_register_tiles_match_numpy(variant, k, stride, rows, width, pad):
    """Planes that end mid-tile (rows past a multiple of ROWS, columns past a multiple of a vector),
    bands of one or two rows (the short tiles, alone or after full bands),
    no padding, padding as wide as the kernel (output rows and columns of zeros), every stride."""
    pad = k if pad == "k" else pad
    if rows + 2 * pad < k or width + 2 * pad < k:
        pytest.skip("no output")
    x = rng.standard_normal((2, 3, rows, width)).astype(np.float32)
    w = rng.standard_normal((6, 1, k, k)).astype(np.float32)  # two outputs per input channel
    want = reference(x, w, stride, (pad, pad), (1, 1))
    got = getattr(depthwise_tiles.depthwise, variant)(x, w, *stride, pad, pad, *want.shape[2:])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_register_tiles_asymmetric_padding_and_reused_buffers():
    """Bottom/right padding comes from the output size alone; a part's later planes see zeros, not
    an earlier plane's values, in their border."""
    x = np.zeros((1, 200, 6, 20), dtype=np.float32)
    x[0, ::2] = 1000.0
    x[0, 1::2] = rng.standard_normal((100, 6, 20))
    w = rng.standard_normal((200, 1, 5, 5)).astype(np.float32)
    padded = reference(np.pad(x, ((0, 0), (0, 0), (1, 3), (0, 4))), w, (1, 1), (0, 0), (1, 1))
    got = depthwise_tiles.depthwise.serial(x, w, 1, 1, 1, 0, 6, 20)
    np.testing.assert_allclose(got, padded, rtol=1e-5, atol=1e-2)


def test_register_tiles_serve_float32_square_kernels_at_strides_1_2_and_2_1_only():
    x32, x64 = np.zeros((1, 2, 4, 4), np.float32), np.zeros((1, 2, 4, 4))

    def weight(k, kw=None, dtype=np.float32):
        return np.zeros((2, 1, k, kw or k), dtype)

    assert depthwise_tiles.supported(x32, weight(5), (1, 1), (1, 1))
    assert depthwise_tiles.supported(x32, weight(5), (2, 2), (1, 1))
    assert not depthwise_tiles.supported(x64, weight(5, dtype=np.float64), (1, 1), (1, 1))
    assert not depthwise_tiles.supported(x32, weight(5, dtype=np.float64), (1, 1), (1, 1))
    assert depthwise_tiles.supported(x32, weight(5), (2, 1), (1, 1))
    assert not depthwise_tiles.supported(x32, weight(5), (1, 2), (1, 1))
    assert not depthwise_tiles.supported(x32, weight(5), (3, 3), (1, 1))
    assert not depthwise_tiles.supported(x32, weight(3), (1, 1), (2, 2))
    assert not depthwise_tiles.supported(x32, weight(1, 7), (1, 1), (1, 1))
    assert not depthwise_tiles.supported(x32, weight(9), (1, 1), (1, 1))


def test_conv2d_on_the_cls_shape_matches_numpy():
    """The functional path on PP-OCR cls's [6, 200, 2, 96] 5x5 depthwise conv (pad 2)."""
    x = rng.standard_normal((6, 200, 2, 96)).astype(np.float32)
    w = rng.standard_normal((200, 1, 5, 5)).astype(np.float32)
    got = paddle.nn.functional.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), padding=2, groups=200)
    np.testing.assert_allclose(got.numpy(), reference(x, w, (1, 1), (2, 2), (1, 1)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("variant", ["serial", "parallel"])
@pytest.mark.parametrize(
    ("kernel", "stride", "pads", "dilation", "mult"),
    [
        ((3, 3), (1, 1), (1, 1), (1, 1), 1),  # stride 1, one output per channel: the flipped forward
        ((5, 5), (1, 1), (2, 1), (1, 2), 2),  # two outputs per channel: phase planes
        ((5, 5), (2, 2), (2, 2), (1, 1), 1),  # PicoDet's stride-2 5x5
        ((3, 3), (2, 1), (2, 1), (2, 1), 1),  # dilated and strided
        ((5, 5), (3, 3), (1, 2), (1, 1), 2),  # three phases per axis
        ((3, 3), (1, 1), (3, 0), (1, 1), 1),  # padding past the kernel's reach: phase planes
        ((2, 4), (2, 2), (0, 1), (1, 1), 1),  # the last input row and column read by no output
    ],
    ids=str,
)
def test_gradients_match_the_adjoint_of_numpy(variant, kernel, stride, pads, dilation, mult):
    """Both gradients, and the input gradient's phase-plane kernel also where the flipped forward
    serves the call, against ``reference_grads``."""
    x = rng.standard_normal((2, 3, 7, 9))
    w = rng.standard_normal((3 * mult, 1, *kernel))
    g = rng.standard_normal(reference(x, w, stride, pads, dilation).shape)
    want_dx, want_dw = reference_grads(x, w, g, stride, pads, dilation)
    geometry = (*stride, *pads, *dilation)
    for input_grad in (depthwise_input_grad, getattr(_depthwise_input_grad_phases, variant)):
        np.testing.assert_allclose(input_grad(g, w, 3, 7, 9, *geometry), want_dx, rtol=1e-12, atol=1e-12)
    got_dw = getattr(depthwise_weight_grad, variant)(x, g, *kernel, *geometry)
    np.testing.assert_allclose(got_dw, want_dw, rtol=1e-12, atol=1e-12)
