"""Higher-order gradients (``paddle.grad(create_graph=True)``) against PyTorch's, in float64.

Backward is made of ops, so a gradient is itself differentiable: second and third derivatives,
gradient penalties and Hessian-vector products must match ``torch.autograd.grad(create_graph=True)``.
"""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as paddle
import paddlectl.framework.nn.functional as F

TOL = {"rtol": 1e-5, "atol": 1e-7}


def _pair(torch, array):
    """The same float64 array as a paddlectl tensor and a torch tensor, both requiring gradients."""
    ours = paddle.to_tensor(array, stop_gradient=False)
    theirs = torch.tensor(array, requires_grad=True)
    return ours, theirs


def _derivatives(fn_ours, fn_theirs, torch, array, order: int):
    """The first ``order`` derivatives of ``sum(fn(x) * c_k)`` chains, ours and theirs, as arrays."""
    rng = np.random.default_rng(7)
    x, tx = _pair(torch, array)
    y, ty = fn_ours(x), fn_theirs(tx)
    got, expected = [], []
    for _ in range(order):
        c = rng.standard_normal(tuple(y.shape))
        (y,) = paddle.grad(y, x, grad_outputs=paddle.to_tensor(c), create_graph=True)
        (ty,) = torch.autograd.grad(ty, tx, grad_outputs=torch.tensor(c), create_graph=True)
        got.append(y.numpy())
        expected.append(ty.detach().numpy())
    return got, expected


def _torch_layer_norm(t):
    """layer_norm composed of torch ops: torch's fused layer_norm has a wrong third derivative (off by
    ~3 against this composition and against finite differences in torch 2.13), its first two agree."""
    mean = t.mean(-1, keepdim=True)
    return (t - mean) / ((t - mean).pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()


def test_torch_fused_layer_norm_agrees_with_its_composition_to_second_order(torch):
    """The reference above is sound: where torch's fused layer_norm is right, the composition agrees."""
    rng = np.random.default_rng(4)
    x = torch.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    cotangents = [torch.tensor(rng.standard_normal((3, 5))) for _ in range(2)]
    results = []
    for f in (lambda t: torch.nn.functional.layer_norm(t, [5]), _torch_layer_norm):
        y = f(x)
        for c in cotangents:
            (y,) = torch.autograd.grad(y, x, grad_outputs=c, create_graph=True)
            results.append(y.detach().numpy())
    np.testing.assert_allclose(results[:2], results[2:], **TOL)


@pytest.mark.parametrize(
    "name, ours, theirs",
    [
        ("tanh", paddle.tanh, "tanh"),
        ("sigmoid", F.sigmoid, "sigmoid"),
        ("softmax", lambda x: F.softmax(x, axis=-1), lambda t: t.softmax(-1)),
        ("layer_norm", lambda x: F.layer_norm(x, [5]), "layer_norm"),
    ],
)
def test_third_derivatives_match_torch(torch, name, ours, theirs):
    if theirs == "layer_norm":
        theirs = _torch_layer_norm
    elif isinstance(theirs, str):
        theirs = getattr(torch, theirs)
    x = np.random.default_rng(0).standard_normal((3, 5))
    got, expected = _derivatives(ours, theirs, torch, x, order=3)
    for k, (g, e) in enumerate(zip(got, expected, strict=True), start=1):
        np.testing.assert_allclose(g, e, **TOL, err_msg=f"{name}: derivative {k}")


def test_conv2d_second_derivatives_match_torch(torch):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 4, 6, 6)), rng.standard_normal((6, 2, 3, 3))
    (px, tx), (pw, tw) = _pair(torch, x), _pair(torch, w)
    y = F.conv2d(px, pw, stride=2, padding=1, groups=2)
    ty = torch.nn.functional.conv2d(tx, tw, stride=2, padding=1, groups=2)
    c = rng.standard_normal(tuple(y.shape))
    gx, gw = paddle.grad(y, [px, pw], grad_outputs=paddle.to_tensor(c), create_graph=True)
    tgx, tgw = torch.autograd.grad(ty, [tx, tw], grad_outputs=torch.tensor(c), create_graph=True)
    a, b = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    second = paddle.grad((gx * paddle.to_tensor(a)).sum() + (gw * paddle.to_tensor(b)).sum(), [px, pw])
    tsecond = torch.autograd.grad((tgx * torch.tensor(a)).sum() + (tgw * torch.tensor(b)).sum(), [tx, tw])
    for g, e in zip([gx, gw, *second], [tgx, tgw, *tsecond], strict=True):
        np.testing.assert_allclose(g.numpy(), e.detach().numpy(), **TOL)


def test_gradient_penalty_through_an_mlp_matches_torch(torch):
    """WGAN-GP's penalty: the input gradient's norm, pushed to 1, trained through the parameters."""
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in [(8, 4), (4, 16), (16,), (16, 1), (1,)]]
    ours, theirs = zip(*(_pair(torch, a) for a in arrays), strict=True)

    def penalty(mod, grad, x, w1, b1, w2, b2):
        out = mod.tanh(x @ w1 + b1) @ w2 + b2
        (g,) = grad(out.sum(), x)
        norm = ((g * g).sum(1) + 1e-12).sqrt()
        return ((norm - 1) ** 2).mean()

    gp = penalty(paddle, lambda y, x: paddle.grad(y, x, create_graph=True), *ours)
    tgp = penalty(torch, lambda y, x: torch.autograd.grad(y, x, create_graph=True), *theirs)
    np.testing.assert_allclose(gp.numpy(), tgp.detach().numpy(), **TOL)
    got = paddle.grad(gp, list(ours), allow_unused=True)
    expected = torch.autograd.grad(tgp, list(theirs), allow_unused=True)
    assert got[-1] is None and expected[-1] is None  # the output bias does not move the input gradient
    for i, (g, e) in enumerate(zip(got[:-1], expected[:-1], strict=True)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), **TOL, err_msg=f"d penalty / d input {i}")


def test_hessian_vector_product_through_matmul_and_softmax_matches_torch(torch):
    rng = np.random.default_rng(3)
    x, w, c, v = (rng.standard_normal(s) for s in [(5, 4), (4, 3), (5, 3), (4, 3)])
    pw, tw = _pair(torch, w)
    loss = (F.softmax(paddle.to_tensor(x) @ pw, axis=-1) * paddle.to_tensor(c)).sum()
    tloss = ((torch.tensor(x) @ tw).softmax(-1) * torch.tensor(c)).sum()
    (g,) = paddle.grad(loss, pw, create_graph=True)
    (tg,) = torch.autograd.grad(tloss, tw, create_graph=True)
    (hvp,) = paddle.grad((g * paddle.to_tensor(v)).sum(), pw)
    (thvp,) = torch.autograd.grad((tg * torch.tensor(v)).sum(), tw)
    np.testing.assert_allclose(hvp.numpy(), thvp.numpy(), **TOL)


def test_a_gradient_without_create_graph_is_a_constant():
    x = paddle.to_tensor(np.array([0.5, -1.0]), stop_gradient=False)
    (g,) = paddle.grad(paddle.tanh(x), x)
    assert g.stop_gradient
    (g,) = paddle.grad(paddle.tanh(x), x, create_graph=True)
    assert not g.stop_gradient
