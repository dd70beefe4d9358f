"""Losses against finite differences, real PaddlePaddle (forward and input gradient) and PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DTypeError, ShapeError

F = ours.nn.functional
rng = np.random.default_rng(0)


def _wrap(mod, value, grad: bool):
    if isinstance(value, np.ndarray):
        return mod.to_tensor(value, stop_gradient=not (grad and value.dtype.kind == "f"))
    return value


def compare_paddle(real_paddle, fn: str, *arrays, rtol=1e-5, atol=1e-6, **kwargs):
    """Same call on both frameworks: equal outputs (shape and values) and equal input gradients."""
    theirs_in = [_wrap(real_paddle, a, True) for a in arrays]
    ours_in = [_wrap(ours, a, True) for a in arrays]
    theirs_kw = {k: _wrap(real_paddle, v, False) for k, v in kwargs.items()}
    ours_kw = {k: _wrap(ours, v, False) for k, v in kwargs.items()}
    expected = getattr(real_paddle.nn.functional, fn)(*theirs_in, **theirs_kw)
    got = getattr(F, fn)(*ours_in, **ours_kw)
    assert got.shape == list(expected.shape)
    assert got.dtype == np.dtype(str(expected.numpy().dtype))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=rtol, atol=atol)
    cot = rng.standard_normal(got.shape).astype(got.dtype)
    (expected * real_paddle.to_tensor(cot)).sum().backward()
    (got * ours.to_tensor(cot)).sum().backward()
    for i, (t, o) in enumerate(zip(theirs_in, ours_in, strict=True)):
        if not o.stop_gradient and t.grad is not None:
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=f"grad {i}")


def _f32(*shape):
    return rng.standard_normal(shape).astype("float32")


def _probs(*shape):
    p = rng.uniform(0.05, 1, shape)
    return (p / p.sum(-1, keepdims=True)).astype("float32")


HARD = np.array([0, 1, 4, 2, -100, 3, 4])
VALID = np.array([0, 1, 4, 2, 0, 3, 4])
W = rng.uniform(0.5, 2, 5).astype("float32")

CE_CASES = [
    ({}, HARD),
    ({"reduction": "none"}, HARD),
    ({"reduction": "sum"}, HARD),
    ({"reduction": "none"}, HARD[:, None]),
    ({"ignore_index": 1}, VALID),
    ({"ignore_index": 1, "weight": W}, VALID),
    ({"weight": W}, HARD),
    ({"weight": W, "reduction": "none"}, HARD),
    ({"label_smoothing": 0.1}, VALID),
    ({"label_smoothing": 0.2, "reduction": "none", "weight": W}, VALID),
]


@pytest.mark.parametrize(("kwargs", "label"), CE_CASES)
def test_cross_entropy_hard_matches_paddle(real_paddle, kwargs, label):
    compare_paddle(real_paddle, "cross_entropy", _f32(7, 5), label, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"reduction": "none"}, {"weight": W}, {"label_smoothing": 0.1}])
def test_cross_entropy_soft_matches_paddle(real_paddle, kwargs):
    compare_paddle(real_paddle, "cross_entropy", _f32(6, 5), _probs(6, 5), soft_label=True, **kwargs)


@pytest.mark.parametrize(("axis", "label_shape"), [(1, (2, 3)), (1, (2, 1, 3)), (-3, (3, 4)), (0, (1, 3, 4))])
def test_cross_entropy_axis_matches_paddle(real_paddle, axis, label_shape):
    x = _f32(2, 5, 3) if abs(axis) == 1 else _f32(5, 3, 4)
    compare_paddle(real_paddle, "cross_entropy", x, rng.integers(0, 5, label_shape), axis=axis, reduction="none")
    compare_paddle(real_paddle, "cross_entropy", x, rng.integers(0, 5, label_shape), axis=axis)


def test_cross_entropy_without_softmax_matches_paddle(real_paddle):
    compare_paddle(real_paddle, "cross_entropy", _probs(4, 5), VALID[:4], use_softmax=False)
    compare_paddle(real_paddle, "cross_entropy", _probs(4, 5), HARD[2:6], use_softmax=False, reduction="none")
    compare_paddle(real_paddle, "cross_entropy", _probs(4, 5), _probs(4, 5), use_softmax=False, soft_label=True)


def test_cross_entropy_edges(real_paddle):
    compare_paddle(real_paddle, "cross_entropy", _f32(1, 1), np.array([0]))  # one class: loss 0
    compare_paddle(real_paddle, "cross_entropy", _f32(0, 5), np.zeros(0, np.int64), reduction="sum")
    assert np.isnan(F.cross_entropy(ours.zeros([0, 5]), ours.zeros([0], dtype="int64")).item())
    strided = _f32(7, 10)[:, ::2]  # non-contiguous
    compare_paddle(real_paddle, "cross_entropy", strided, VALID, reduction="none")
    big = (_f32(3, 5) * 1e4).astype("float32")  # stability far from 0
    compare_paddle(real_paddle, "cross_entropy", big, VALID[:3], rtol=1e-4)


def test_cross_entropy_float64_and_softmax_with_cross_entropy(real_paddle):
    compare_paddle(real_paddle, "cross_entropy", rng.standard_normal((4, 3)), VALID[:4] % 3, rtol=1e-10, atol=1e-12)
    compare_paddle(real_paddle, "softmax_with_cross_entropy", _f32(7, 5), HARD[:, None])
    compare_paddle(real_paddle, "softmax_with_cross_entropy", _f32(6, 5), _probs(6, 5), soft_label=True)
    x = _f32(3, 5)
    loss, sm = F.softmax_with_cross_entropy(ours.to_tensor(x), ours.to_tensor(VALID[:3, None]), return_softmax=True)
    np.testing.assert_allclose(sm.numpy(), real_paddle.nn.functional.softmax(real_paddle.to_tensor(x)).numpy(), 1e-6)


@pytest.mark.parametrize(
    ("kwargs", "label"),
    [({}, VALID), ({"reduction": "none"}, HARD), ({"weight": W, "ignore_index": 2}, VALID), ({"weight": W}, HARD)],
)
def test_cross_entropy_gradcheck(gradcheck, kwargs, label):
    weight = ours.to_tensor(W.astype("float64")) if "weight" in kwargs else None
    kw = {**kwargs, "weight": weight}
    gradcheck(lambda x: F.cross_entropy(x, ours.to_tensor(label), **kw), rng.standard_normal((7, 5)))
    soft = _probs(7, 5).astype("float64")
    gradcheck(lambda x: F.cross_entropy(x, ours.to_tensor(soft), soft_label=True, label_smoothing=0.1), _f32(7, 5))
    gradcheck(lambda x: F.cross_entropy(x, ours.to_tensor(VALID), label_smoothing=0.3), _f32(7, 5))
    gradcheck(lambda x: F.cross_entropy(x, ours.to_tensor(VALID[2:3, None]), axis=0), _f32(5, 1))


def test_cross_entropy_matches_torch(torch):
    x, y = _f32(8, 6), rng.integers(0, 6, 8)
    w = rng.uniform(0.5, 2, 6).astype("float32")
    tx = torch.tensor(x, requires_grad=True)
    expected = torch.nn.functional.cross_entropy(tx, torch.tensor(y), weight=torch.tensor(w), label_smoothing=0.0)
    expected.backward()
    ox = ours.to_tensor(x, stop_gradient=False)
    got = F.cross_entropy(ox, ours.to_tensor(y), weight=ours.to_tensor(w))
    got.backward()
    np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_cross_entropy_bad_inputs():
    x = ours.to_tensor(_f32(4, 5))
    with pytest.raises(ShapeError, match="cross_entropy"):
        F.cross_entropy(x, ours.to_tensor(np.zeros((3,), np.int64)))
    with pytest.raises(ShapeError, match="rank"):
        F.cross_entropy(x, ours.to_tensor(np.zeros((4, 1, 1), np.int64)))
    with pytest.raises(DTypeError, match="soft_label=True"):
        F.cross_entropy(x, ours.to_tensor(np.zeros(4, np.float32)))
    with pytest.raises(DTypeError, match="input"):
        F.cross_entropy(ours.to_tensor(np.zeros((4, 5), np.int64)), ours.to_tensor(np.zeros(4, np.int64)))
    with pytest.raises(IndexError, match="label value 7"):
        F.cross_entropy(x, ours.to_tensor(np.array([0, 7, 1, 2])))
    with pytest.raises(ShapeError, match="weight"):
        F.cross_entropy(x, ours.to_tensor(VALID[:4]), weight=ours.to_tensor(W[:3]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, ours.to_tensor(VALID[:4]), reduction="avg")
    with pytest.raises(ShapeError, match="axis"):
        F.cross_entropy(x, ours.to_tensor(VALID[:4]), axis=2)


# ----- nll -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "label_shape", "kwargs"),
    [
        ((7, 5), (7,), {}),
        ((7, 5), (7,), {"weight": W, "ignore_index": 1}),
        ((7, 5), (7,), {"reduction": "sum"}),
        ((2, 5, 3), (2, 3), {"reduction": "none"}),
        ((2, 5, 3, 2), (2, 3, 2), {"weight": W}),
        ((1, 5), (1,), {"reduction": "none"}),
    ],
)
def test_nll_loss_matches_paddle(real_paddle, gradcheck, shape, label_shape, kwargs):
    label = rng.integers(0, 5, label_shape)
    compare_paddle(real_paddle, "nll_loss", _f32(*shape), label, **kwargs)
    weight = ours.to_tensor(W.astype("float64")) if "weight" in kwargs else None
    kw = {**kwargs, "weight": weight}
    gradcheck(lambda x: F.nll_loss(x, ours.to_tensor(label), **kw), rng.standard_normal(shape))


def test_nll_loss_bad_inputs():
    with pytest.raises(ShapeError, match="nll_loss"):
        F.nll_loss(ours.to_tensor(_f32(4, 5)), ours.to_tensor(np.zeros(3, np.int64)))
    with pytest.raises(DTypeError, match="label"):
        F.nll_loss(ours.to_tensor(_f32(4, 5)), ours.to_tensor(np.zeros(4, np.float32)))


# ----- pointwise -----------------------------------------------------------------------------

POINTWISE = [
    ("mse_loss", {}),
    ("mse_loss", {"reduction": "none"}),
    ("l1_loss", {"reduction": "sum"}),
    ("smooth_l1_loss", {}),
    ("smooth_l1_loss", {"delta": 0.4, "reduction": "none"}),
    ("smooth_l1_loss", {"delta": 0.4, "is_huber": False}),
]


@pytest.mark.parametrize(("fn", "kwargs"), POINTWISE)
def test_regression_losses(real_paddle, gradcheck, fn, kwargs):
    compare_paddle(real_paddle, fn, _f32(3, 4), _f32(3, 4), **kwargs)
    if fn != "smooth_l1_loss":  # Paddle's smooth_l1 kernel wants equal shapes; the others broadcast
        compare_paddle(real_paddle, fn, _f32(3, 4), _f32(1, 4), **kwargs)
    gradcheck(lambda x, y: getattr(F, fn)(x, y, **kwargs), rng.standard_normal((2, 3)), rng.standard_normal((2, 3)))


def test_binary_cross_entropy(real_paddle, gradcheck):
    p = rng.uniform(0.05, 0.95, (3, 4)).astype("float32")
    y = rng.integers(0, 2, (3, 4)).astype("float32")
    compare_paddle(real_paddle, "binary_cross_entropy", p, y)
    compare_paddle(real_paddle, "binary_cross_entropy", p, y, weight=W[:4], reduction="sum")
    compare_paddle(real_paddle, "binary_cross_entropy", np.float32([0, 1, 0.5, 1e-30]), np.float32([1, 0, 1, 1]))
    gradcheck(lambda x: F.binary_cross_entropy(x, ours.to_tensor(y.astype("float64"))), p)
    with pytest.raises(ValueError, match="sigmoid"):
        F.binary_cross_entropy(ours.to_tensor(_f32(2, 2) + 5), ours.to_tensor(y[:2, :2]))


def test_binary_cross_entropy_with_logits(real_paddle, gradcheck, torch):
    x = (_f32(3, 4) * 10).astype("float32")  # includes large |x|
    y = rng.uniform(0, 1, (3, 4)).astype("float32")
    pw = rng.uniform(0.5, 3, 4).astype("float32")
    compare_paddle(real_paddle, "binary_cross_entropy_with_logits", x, y)
    compare_paddle(real_paddle, "binary_cross_entropy_with_logits", x, y, pos_weight=pw, weight=W[:4], reduction="none")
    compare_paddle(real_paddle, "binary_cross_entropy_with_logits", x, np.float32([[-100, 1, 0, 1]] * 3))
    yd, pwd = y.astype("float64"), ours.to_tensor(pw.astype("float64"))
    gradcheck(lambda t: F.binary_cross_entropy_with_logits(t, ours.to_tensor(yd), pos_weight=pwd), _f32(3, 4))
    tx = torch.tensor(x)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(tx, torch.tensor(y), pos_weight=torch.tensor(pw))
    got = F.binary_cross_entropy_with_logits(ours.to_tensor(x), ours.to_tensor(y), pos_weight=ours.to_tensor(pw))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(real_paddle, gradcheck, reduction, log_target):
    target = np.log(_probs(3, 4)) if log_target else _probs(3, 4)
    target[0, 0] = -1.0 if log_target else 0.0  # zero-probability target contributes nothing
    compare_paddle(real_paddle, "kl_div", np.log(_probs(3, 4)), target, reduction=reduction, log_target=log_target)
    td = ours.to_tensor(target.astype("float64"))
    gradcheck(lambda x: F.kl_div(x, td, reduction=reduction, log_target=log_target), _f32(3, 4))


def test_pointwise_bad_inputs():
    with pytest.raises(ShapeError, match="mse_loss"):
        F.mse_loss(ours.to_tensor(_f32(3, 4)), ours.to_tensor(_f32(3, 5)))
    with pytest.raises(DTypeError, match="input"):
        F.l1_loss(ours.to_tensor(np.arange(3)), ours.to_tensor(np.arange(3)))
    with pytest.raises(ValueError, match="batchmean"):
        F.mse_loss(ours.to_tensor(_f32(3)), ours.to_tensor(_f32(3)), reduction="batchmean")


# ----- layers --------------------------------------------------------------------------------

LAYERS = [
    ("CrossEntropyLoss", {"weight": W, "label_smoothing": 0.1}, lambda: (_f32(7, 5), VALID)),
    ("CrossEntropyLoss", {"reduction": "none"}, lambda: (_f32(7, 5), HARD)),
    ("NLLLoss", {"ignore_index": 2}, lambda: (_f32(7, 5), VALID)),
    ("MSELoss", {}, lambda: (_f32(3, 4), _f32(3, 4))),
    ("L1Loss", {"reduction": "sum"}, lambda: (_f32(3, 4), _f32(3, 4))),
    ("SmoothL1Loss", {"delta": 0.5}, lambda: (_f32(3, 4), _f32(3, 4))),
    ("BCELoss", {"weight": W[:4]}, lambda: (_probs(3, 4), rng.integers(0, 2, (3, 4)).astype("float32"))),
    ("BCEWithLogitsLoss", {"pos_weight": W[:4]}, lambda: (_f32(3, 4), _probs(3, 4))),
    ("KLDivLoss", {"reduction": "batchmean"}, lambda: (np.log(_probs(3, 4)), _probs(3, 4))),
]


@pytest.mark.parametrize(("name", "kwargs", "make"), LAYERS)
def test_layers_match_paddle(real_paddle, name, kwargs, make):
    x, y = make()
    theirs = getattr(real_paddle.nn, name)(**{k: _wrap(real_paddle, v, False) for k, v in kwargs.items()})
    mine = getattr(ours.nn, name)(**{k: _wrap(ours, v, False) for k, v in kwargs.items()})
    tx, ox = real_paddle.to_tensor(x, stop_gradient=False), ours.to_tensor(x, stop_gradient=False)
    expected, got = theirs(tx, real_paddle.to_tensor(y)), mine(ox, ours.to_tensor(y))
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    expected.sum().backward()
    got.sum().backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_layer_rejects_bad_reduction():
    with pytest.raises(ValueError, match="MSELoss"):
        ours.nn.MSELoss(reduction="avg")
