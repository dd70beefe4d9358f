"""paddle.vision.ops' RoI ops (roi_align, roi_pool, psroi_pool and their layers): values and image
gradients against real Paddle 3.3.1, gradients against finite differences, and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.vision import ops as vops


def _case(seed: int, channels: int = 3, dtype: str = "float64", tiny: float = 0.2):
    """Two images and five boxes (2 on the first), some reaching past the border, one ``tiny``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, channels, 12, 14)).astype(dtype)
    corner = rng.uniform(-2, 10, (5, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(0.3, 9, (5, 2))], axis=1).astype(dtype)
    boxes[4] = [3.2, 4.1, 3.2 + tiny, 4.1 + tiny]
    return x, boxes, np.array([2, 3], np.int32)


def _run(mod, fn: str, x, boxes, num, cotangent_seed: int, **kwargs):
    """(output, gradient of <output, random cotangent> in x) under ``mod`` (Paddle or ours)."""
    t = mod.to_tensor(x, stop_gradient=False)
    out = getattr(mod.vision.ops, fn)(t, mod.to_tensor(boxes), mod.to_tensor(num), **kwargs)
    c = np.random.default_rng(cotangent_seed).standard_normal(out.shape).astype(x.dtype)
    (out * mod.to_tensor(c)).sum().backward()
    return out.numpy(), t.grad.numpy()


ALIGN_CASES = [
    {"output_size": 3},
    {"output_size": (2, 4), "spatial_scale": 0.5, "sampling_ratio": 2},
    {"output_size": (3, 2), "aligned": False},
    {"output_size": (4, 3), "aligned": False, "sampling_ratio": 1, "spatial_scale": 1.5},
]


@pytest.mark.parametrize("kwargs", ALIGN_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_roi_align_matches_paddle(real_paddle, kwargs, dtype):
    # Paddle's CPU gradient of aligned RoIAlign widens boxes under a pixel to one pixel, which its
    # forward does not (its GPU kernel does not either): ours is the forward's true gradient
    # (test_gradients_are_the_adjoints), so aligned cases compare on boxes of a pixel or more
    aligned = kwargs.get("aligned", True)
    x, boxes, num = _case(1, dtype=dtype, tiny=0.2 if not aligned else 1.1 / kwargs.get("spatial_scale", 1.0))
    want, want_grad = _run(real_paddle, "roi_align", x, boxes, num, 7, **kwargs)
    got, got_grad = _run(ours, "roi_align", x, boxes, num, 7, **kwargs)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_grad, want_grad, rtol=tol, atol=tol)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("kwargs", [{"output_size": 3}, {"output_size": (2, 4), "spatial_scale": 0.6}])
def test_roi_pool_matches_paddle(real_paddle, kwargs):
    x, boxes, num = _case(2, dtype="float32")
    want, want_grad = _run(real_paddle, "roi_pool", x, boxes, num, 8, **kwargs)
    got, got_grad = _run(ours, "roi_pool", x, boxes, num, 8, **kwargs)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{"output_size": 2}, {"output_size": (3, 2), "spatial_scale": 0.7}])
def test_psroi_pool_matches_paddle(real_paddle, kwargs):
    size = kwargs["output_size"]
    bins = size * size if isinstance(size, int) else size[0] * size[1]
    x, boxes, num = _case(3, channels=2 * bins)
    want, want_grad = _run(real_paddle, "psroi_pool", x, boxes, num, 9, **kwargs)
    got, got_grad = _run(ours, "psroi_pool", x, boxes, num, 9, **kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12, atol=1e-12)


def test_layers_match_their_functions(real_paddle):
    x, boxes, num = _case(4, channels=8)
    args = [ours.to_tensor(a) for a in (x, boxes, num)]
    theirs = [real_paddle.to_tensor(a) for a in (x, boxes, num)]
    for layer in ("RoIAlign", "RoIPool", "PSRoIPool"):
        ours_layer = getattr(vops, layer)((2, 2), 0.5)
        paddle_layer = getattr(real_paddle.vision.ops, layer)((2, 2), 0.5)
        np.testing.assert_allclose(ours_layer(*args).numpy(), paddle_layer(*theirs).numpy(), rtol=1e-12, atol=1e-12)
    unaligned = vops.RoIAlign(3)(*args, aligned=False).numpy()
    np.testing.assert_allclose(
        unaligned, real_paddle.vision.ops.RoIAlign(3)(*theirs, aligned=False).numpy(), rtol=1e-12
    )


@pytest.mark.parametrize("fn", ["roi_align", "psroi_pool", "roi_pool"])
def test_second_derivative_flows_through_the_adjoint(fn):
    """The gradient is itself differentiable (in the cotangent): d/dc <grad_x(c), v> is the op's
    derivative along v (the op itself for the linear pools; roi_pool's moves with its argmax)."""
    x, boxes, num = _case(5, channels=4)
    t = ours.to_tensor(x, stop_gradient=False)
    out = getattr(vops, fn)(t, ours.to_tensor(boxes), ours.to_tensor(num), 2)
    c = ours.to_tensor(np.random.default_rng(0).standard_normal(out.shape), stop_gradient=False)
    (gx,) = ours.grad([(out * c).sum()], [t], create_graph=True)
    v = np.random.default_rng(1).standard_normal(x.shape)
    (gc,) = ours.grad([(gx * ours.to_tensor(v)).sum()], [c])
    args = (ours.to_tensor(boxes), ours.to_tensor(num), 2)
    if fn == "roi_pool":
        step = 1e-7
        want = (vops.roi_pool(ours.to_tensor(x + step * v), *args) - vops.roi_pool(ours.to_tensor(x), *args)) / step
        np.testing.assert_allclose(gc.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    else:
        want = getattr(vops, fn)(ours.to_tensor(v), *args)
        np.testing.assert_allclose(gc.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", ["roi_align", "psroi_pool"])
@pytest.mark.parametrize("aligned", [True, False])
def test_gradients_are_the_adjoints(fn, aligned):
    """Both pools are linear in the image, so <op(x), c> = <x, grad(c)> exactly, tiny boxes included."""
    x, boxes, num = _case(8, channels=4, tiny=0.2)
    kwargs = {"aligned": aligned} if fn == "roi_align" else {}
    out, grad = _run(ours, fn, x, boxes, num, 3, output_size=2, **kwargs)
    c = np.random.default_rng(3).standard_normal(out.shape)
    assert np.isclose((out * c).sum(), (x * grad).sum(), rtol=1e-12)


def test_single_image_needs_no_boxes_num(real_paddle):
    x, boxes, _ = _case(6)
    got = vops.roi_align(ours.to_tensor(x[:1]), ours.to_tensor(boxes), None, 2)
    want = vops.roi_align(ours.to_tensor(x[:1]), ours.to_tensor(boxes), ours.to_tensor(np.array([5], np.int32)), 2)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_bad_arguments_are_named():
    x, boxes, num = _case(7)
    xt, bt, nt = ours.to_tensor(x), ours.to_tensor(boxes), ours.to_tensor(num)
    with pytest.raises(ShapeError, match=r"boxes must be a \[R, 4\]"):
        vops.roi_align(xt, ours.ones([5, 3], "float64"), nt, 2)
    with pytest.raises(ShapeError, match="boxes_num .* is required"):
        vops.roi_pool(xt, bt, None, 2)
    with pytest.raises(ShapeError, match=r"boxes_num must be a \[2\] tensor"):
        vops.roi_align(xt, bt, ours.to_tensor(np.array([5], np.int32)), 2)
    with pytest.raises(DTypeError, match="boxes_num"):
        vops.roi_align(xt, bt, ours.to_tensor(np.array([2.0, 3.0])), 2)
    with pytest.raises(ShapeError, match="must sum to the number of boxes"):
        vops.roi_align(xt, bt, ours.to_tensor(np.array([1, 2], np.int32)), 2)
    with pytest.raises(ShapeError, match="multiple of output_size"):
        vops.psroi_pool(xt, bt, nt, 2)
    with pytest.raises(ShapeError, match="output_size must be a positive int"):
        vops.roi_pool(xt, bt, nt, (2, 0))
