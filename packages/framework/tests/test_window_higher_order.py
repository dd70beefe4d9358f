"""Second and third derivatives of convolution, pooling and resizing against central differences.

Backward of these ops is made of ops (conv2d's gradients are conv2d_transpose and
conv2d_weight_grad, whose gradients are convolutions again; pooling and resizing backward are
linear ops whose adjoints are the forward ops), so ``paddle.grad(create_graph=True)`` can go on
differentiating. Each level k is checked in a random direction u: <grad of s_k, u> against
(s_k(p + eps u) - s_k(p - eps u)) / 2 eps, where s_0 is the loss and s_k = <grad of s_{k-1}, v_k>.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
import paddlectl.framework.nn.functional as F

EPS = 1e-6
RTOL = 1e-6


def _levels(loss, arrays, wrt, directions, order):
    """[s_0, ..., s_order] as floats, and the gradients of s_0 .. s_{order-1} w.r.t. ``wrt`` (arrays)."""
    tensors = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    s = loss(*tensors)
    values, grads = [float(s.numpy())], []
    for k in range(order):
        (g,) = paddle.grad(s, [tensors[wrt[k]]], create_graph=True)
        grads.append(g.numpy())
        s = (g * paddle.to_tensor(directions[k])).sum()
        values.append(float(s.numpy()))
    return values, grads


def _check(loss, arrays, wrt, order, seed=0):
    """Each of the first ``order`` derivatives (w.r.t. ``arrays[wrt[k]]`` at level k) against central
    differences of the level below it."""
    rng = np.random.default_rng(seed)
    directions = [rng.standard_normal(arrays[i].shape) for i in wrt]
    _, grads = _levels(loss, arrays, wrt, directions, order)
    for k in range(order):
        u = rng.standard_normal(arrays[wrt[k]].shape)

        def level(sign, k=k, u=u):
            shifted = [a + sign * EPS * u if i == wrt[k] else a for i, a in enumerate(arrays)]
            return _levels(loss, shifted, wrt, directions, k)[0][k]

        numeric = (level(1) - level(-1)) / (2 * EPS)
        analytic = float((grads[k] * u).sum())
        assert abs(analytic) > 1e-3, f"derivative {k + 1} is ~0 here: the check would not test anything"
        assert analytic == pytest.approx(numeric, rel=RTOL, abs=1e-6), f"derivative {k + 1}"


CONV_CASES = {
    "plain": ((2, 3, 5, 5), (4, 3, 3, 3), dict()),
    "stride2_pad1": ((2, 3, 7, 6), (4, 3, 3, 3), dict(stride=2, padding=1)),
    "groups2_pad1": ((1, 4, 6, 5), (6, 2, 3, 3), dict(groups=2, padding=1)),
    "depthwise_stride2": ((2, 3, 6, 6), (6, 1, 3, 3), dict(groups=3, stride=2, padding=1)),
    "nhwc_dilated": ((1, 6, 6, 2), (3, 2, 2, 2), dict(dilation=2, padding=1, data_format="NHWC")),
}

WRT_ORDERS = {"xxx": (0, 0, 0), "www": (1, 1, 1), "xwx": (0, 1, 0), "wxw": (1, 0, 1)}


@pytest.mark.parametrize("wrt", WRT_ORDERS.values(), ids=WRT_ORDERS.keys())
@pytest.mark.parametrize("case", CONV_CASES.values(), ids=CONV_CASES.keys())
def test_conv2d_third_derivatives_match_finite_differences(case, wrt):
    x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape) / 3
    c = rng.standard_normal(F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), **kwargs).shape)
    _check(lambda x, w: (paddle.tanh(F.conv2d(x, w, **kwargs)) * paddle.to_tensor(c)).sum(), [x, w], wrt, 3)


TRANSPOSE_CASES = {
    "stride2_pad1": ((2, 3, 4, 3), (3, 2, 3, 3), dict(stride=2, padding=1)),
    "groups2_output_padding": ((1, 4, 3, 3), (4, 2, 3, 2), dict(stride=2, groups=2, output_padding=1)),
    "output_padding_past_stride": ((1, 2, 3, 3), (2, 3, 2, 2), dict(stride=[1, 2], dilation=[3, 1], output_padding=[2, 1])),
}  # fmt: skip


@pytest.mark.parametrize("wrt", [(0, 0, 0), (1, 0, 1)], ids=["xxx", "wxw"])
@pytest.mark.parametrize("case", TRANSPOSE_CASES.values(), ids=TRANSPOSE_CASES.keys())
def test_conv2d_transpose_third_derivatives_match_finite_differences(case, wrt):
    x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape) / 3
    out = F.conv2d_transpose(paddle.to_tensor(x), paddle.to_tensor(w), **kwargs)
    c = rng.standard_normal(out.shape)
    loss = lambda x, w: (paddle.tanh(F.conv2d_transpose(x, w, **kwargs)) * paddle.to_tensor(c)).sum()  # noqa: E731
    _check(loss, [x, w], wrt, 3)


def test_conv2d_hessian_is_bilinear_in_x_and_w():
    """sum(conv2d(x, w) * c) is bilinear: its second derivative in x alone is exactly zero, and its
    mixed one is exact (no tanh curvature to hide an error in)."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 4, 5, 5)), rng.standard_normal((4, 2, 3, 3))
    c, v = rng.standard_normal((2, 4, 3, 3)), rng.standard_normal((2, 4, 5, 5))
    xt, wt = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(w, stop_gradient=False)
    (gx,) = paddle.grad((F.conv2d(xt, wt, stride=1, groups=2) * paddle.to_tensor(c)).sum(), [xt], create_graph=True)
    gxx, gxw = paddle.grad((gx * paddle.to_tensor(v)).sum(), [xt, wt], allow_unused=True)
    assert gxx is None or not np.any(gxx.numpy())
    # d/dw <grad_x, v> = d/dw <c, conv2d(v, w)> = the weight gradient of conv2d(v, w) for c
    vt, wt2 = paddle.to_tensor(v), paddle.to_tensor(w, stop_gradient=False)
    (F.conv2d(vt, wt2, groups=2) * paddle.to_tensor(c)).sum().backward()
    np.testing.assert_allclose(gxw.numpy(), wt2.grad.numpy(), rtol=1e-12, atol=1e-12)


POOLS = {
    "max_2x2": lambda x: F.max_pool2d(x, 2, 2),
    "max_3x3_s2_pad1_ceil": lambda x: F.max_pool2d(x, 3, 2, padding=1, ceil_mode=True),
    "max_nhwc": lambda x: F.max_pool2d(x.transpose([0, 2, 3, 1]), 2, 1, data_format="NHWC"),
    "adaptive_max": lambda x: F.adaptive_max_pool2d(x, (2, 3)),
    "avg_3x3_s2_pad1": lambda x: F.avg_pool2d(x, 3, 2, padding=1, exclusive=False),
    "adaptive_avg": lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    "bilinear": lambda x: F.interpolate(x, size=(9, 7), mode="bilinear"),
    "bilinear_align_corners": lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True),
    "nearest": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
}


@pytest.mark.parametrize("pool", POOLS.values(), ids=POOLS.keys())
def test_pool_and_resize_second_derivatives_match_finite_differences(pool):
    """tanh(pool(x)): the second derivative runs the backward op's own vjp (max: the gather at the
    maxima; avg: the pooling; resize: the resize). Random data has no ties at the maxima, and a
    step of 1e-6 moves none."""
    x = np.random.default_rng(4).standard_normal((2, 3, 6, 5))
    c = np.random.default_rng(5).standard_normal(pool(paddle.to_tensor(x)).shape)
    _check(lambda x: (paddle.tanh(pool(x)) * paddle.to_tensor(c)).sum(), [x], (0, 0), 2)


def test_max_pool_grad_is_linear_in_the_output_gradient():
    """The mixed derivative d/dc <grad_x <c, maxpool(x)>, v> is v gathered at the maxima."""
    rng = np.random.default_rng(6)
    x, v = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((1, 2, 4, 4))
    xt = paddle.to_tensor(x, stop_gradient=False)
    ct = paddle.to_tensor(rng.standard_normal((1, 2, 2, 2)), stop_gradient=False)
    out, mask = F.max_pool2d(xt, 2, 2, return_mask=True)
    (gx,) = paddle.grad((out * ct).sum(), [xt], create_graph=True)
    (gc,) = paddle.grad((gx * paddle.to_tensor(v)).sum(), [ct])
    expected = np.take_along_axis(v.reshape(1, 2, 16), mask.numpy().reshape(1, 2, 4), axis=2).reshape(1, 2, 2, 2)
    np.testing.assert_array_equal(gc.numpy(), expected)


class ConvGradStep(paddle.nn.Layer):
    """conv2d, max pooling and a resize whose forward returns the gradients of a loss with respect
    to the conv weight and the input: the traced program holds conv2d's backward ops."""

    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([4, 2, 3, 3], dtype="float64")
        self.w.set_value(np.random.default_rng(7).standard_normal((4, 2, 3, 3)))

    def forward(self, x):
        x.stop_gradient = False
        y = F.max_pool2d(paddle.tanh(F.conv2d(x, self.w, padding=1)), 2, 2)
        loss = F.interpolate(y, scale_factor=2, mode="bilinear") * 0.5
        return paddle.grad(loss, [self.w, x])


def test_conv_backward_in_a_traced_step_matches_eager_on_other_inputs():
    """The weight gradient reuses the columns the forward built; in a traced program they must come
    from the program's own input, not be frozen from the tracing example."""
    from paddlectl.framework.jit import InputSpec

    eager = ConvGradStep()
    static = paddle.jit.to_static(ConvGradStep(), input_spec=[InputSpec([2, 2, 6, 6], "float64", "x")])
    static.set_state_dict(eager.state_dict())
    for seed in (8, 9):
        x = np.random.default_rng(seed).standard_normal((2, 2, 6, 6))
        xs, xe = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(x, stop_gradient=False)
        for got, want in zip(static(xs), eager(xe), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    names = {op.name for op in static.forward.program.walk()}
    assert {"conv2d_transpose", "conv2d_weight_grad", "max_pool2d_grad", "interpolate_grad"} <= names, names
