"""paddle.vision.ops.deform_conv2d / DeformConv2D (DCN v1 and v2): values and the gradients of every
input against real Paddle 3.3.1, and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import ShapeError
from paddlectl.framework.vision import ops as vops

CASES = [
    {"masked": True, "kernel": (3, 3)},
    {"masked": False, "kernel": (3, 3)},
    {"masked": True, "kernel": (3, 2), "stride": 2, "padding": 1, "dilation": (2, 1), "deformable_groups": 2},
    {"masked": False, "kernel": (2, 3), "padding": (1, 2), "groups": 2, "deformable_groups": 2, "bias": True},
]


def _arrays(case: dict, seed: int = 0):
    rng = np.random.default_rng(seed)
    kh, kw = case["kernel"]
    stride = case.get("stride", 1)
    padding = case.get("padding", 0)
    dilation = case.get("dilation", 1)
    s, p, d = ((v, v) if isinstance(v, int) else v for v in (stride, padding, dilation))
    n, c, h, w, out_channels = 2, 4, 7, 8, 6
    ho = (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    wo = (w + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    dg, groups = case.get("deformable_groups", 1), case.get("groups", 1)
    arrays = {
        "x": rng.standard_normal((n, c, h, w)),
        "offset": rng.uniform(-2.5, 2.5, (n, 2 * dg * kh * kw, ho, wo)),
        "weight": rng.standard_normal((out_channels, c // groups, kh, kw)),
    }
    if case["masked"]:
        arrays["mask"] = rng.uniform(0, 1, (n, dg * kh * kw, ho, wo))
    if case.get("bias"):
        arrays["bias"] = rng.standard_normal(out_channels)
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "deformable_groups": dg, "groups": groups}
    return arrays, attrs


def _run(mod, arrays: dict, attrs: dict):
    tensors = {k: mod.to_tensor(v, stop_gradient=False) for k, v in arrays.items()}
    out = mod.vision.ops.deform_conv2d(**tensors, **attrs)
    c = np.random.default_rng(9).standard_normal(out.shape)
    (out * mod.to_tensor(c)).sum().backward()
    return out.numpy(), {k: t.grad.numpy() for k, t in tensors.items()}


@pytest.mark.parametrize("case", CASES)
def test_deform_conv2d_matches_paddle(real_paddle, case):
    arrays, attrs = _arrays(case)
    want, want_grads = _run(real_paddle, arrays, attrs)
    got, got_grads = _run(ours, arrays, attrs)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    for name, grad in want_grads.items():
        np.testing.assert_allclose(got_grads[name], grad, rtol=1e-9, atol=1e-9, err_msg=name)


def test_layer_matches_paddle_with_the_same_parameters(real_paddle):
    arrays, attrs = _arrays({"masked": True, "kernel": (3, 3), "padding": 1})
    theirs = real_paddle.vision.ops.DeformConv2D(4, 6, 3, padding=1)
    mine = vops.DeformConv2D(4, 6, 3, padding=1)
    assert mine.weight.shape == list(theirs.weight.shape) and mine.bias.shape == list(theirs.bias.shape)
    std = float(np.std(vops.DeformConv2D(16, 64, 3).weight.numpy()))
    assert abs(std - (2.0 / (9 * 16)) ** 0.5) < 0.01  # Paddle's normal initializer, std sqrt(2 / fan_in)
    mine.weight.set_value(theirs.weight.numpy().astype("float32"))
    args = [arrays["x"], arrays["offset"], arrays["mask"]]
    want = theirs(*[real_paddle.to_tensor(a.astype("float32")) for a in args]).numpy()
    got = mine(*[ours.to_tensor(a.astype("float32")) for a in args]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_bad_arguments_are_named():
    arrays, _ = _arrays({"masked": True, "kernel": (3, 3)})
    x, offset, weight, mask = (ours.to_tensor(arrays[k]) for k in ("x", "offset", "weight", "mask"))
    with pytest.raises(ShapeError, match="offset must be"):
        vops.deform_conv2d(x, offset, weight, stride=2)
    with pytest.raises(ShapeError, match="mask must be"):
        vops.deform_conv2d(x, offset, weight, mask=mask[:, :4])
    with pytest.raises(ShapeError, match="deformable_groups=3 must divide"):
        vops.deform_conv2d(x, offset, weight, deformable_groups=3)
    with pytest.raises(ShapeError, match="groups=3"):
        vops.deform_conv2d(x, offset, weight, groups=3)
