"""In-place Tensor methods keep gradients right; Tensor conveniences (.T, .mT, view, new_*, casts)."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize(
    "method",
    [
        lambda x, y: x.add_(y), lambda x, y: x.subtract_(y), lambda x, y: x.multiply_(y),
        lambda x, y: x.add_(y, alpha=2.0), lambda x, y: x.scale_(2.0, 1.0) * y,
        lambda x, y: x.clip_(-0.3, 0.4) + y, lambda x, y: x.exp_() * y, lambda x, y: x.abs_().sqrt_() + y,
        lambda x, y: x.tanh_() * y, lambda x, y: x.reshape_([3, 2]).sum() * y,
        lambda x, y: x.unsqueeze_(0).squeeze_(0) * y, lambda x, y: x.fill_(0.5) * y, lambda x, y: x.zero_() + y,
    ],
)  # fmt: skip
def test_inplace_on_graph_tensor_matches_paddle(real_paddle, method):
    def build(P):
        def fn(a, b):
            x = a * 1.5  # a non-leaf that requires a gradient
            before = x * 1.0  # a consumer of the value before the write
            out = method(x, b)
            return out + before

        return fn

    compare(real_paddle, build, r(2, 3), r(2, 3))


def test_inplace_result_is_self_and_value_correct():
    x = ours.to_tensor([1.0, 4.0])
    assert x.sqrt_() is x
    np.testing.assert_allclose(x.numpy(), [1, 2])
    x.pow_(2.0).add_(ours.to_tensor([1.0, 1.0]))
    np.testing.assert_allclose(x.numpy(), [2, 5])
    ours.unsqueeze_(x, 0)
    assert x.shape == [1, 2]


def test_inplace_gradient_by_finite_differences(gradcheck):
    def fn(a, b):
        x = a * 2.0
        x.multiply_(b).exp_()
        return x.reshape_([6])

    gradcheck(fn, r(2, 3) * 0.3, r(2, 3) * 0.3)


def test_inplace_on_leaf_requiring_grad_raises_paddles_message():
    w = ours.to_tensor(r(2, 2), stop_gradient=False)
    with pytest.raises(ValueError, match="Leaf Tensor .* can't use inplace strategy"):
        w.exp_()
    with ours.no_grad():
        w.zero_()
        w.add_(ours.ones([2, 2]))
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 2)))
    assert not w.stop_gradient and w.is_leaf


def test_random_fills_follow_the_seed_and_stay_on_parameters():
    p = ours.nn.Linear(3, 4).weight
    ours.seed(5)
    with ours.no_grad():
        p.uniform_(-0.1, 0.1)
    first = p.numpy().copy()
    assert np.all(np.abs(first) <= 0.1) and p.dtype == np.float32
    ours.seed(5)
    with ours.no_grad():
        p.uniform_(-0.1, 0.1)
    np.testing.assert_array_equal(p.numpy(), first)
    big = ours.zeros([20000])
    big.normal_(1.0, 2.0)
    assert abs(float(big.mean()) - 1.0) < 0.1 and abs(float(big.std()) - 2.0) < 0.1
    assert p.is_leaf and isinstance(p, ours.Parameter)


def test_transposes_and_views_match_paddle(real_paddle):
    a = r(2, 3, 4)
    compare(real_paddle, lambda P: lambda x: x.T * 1.0, a)
    compare(real_paddle, lambda P: lambda x: x.mT * 1.0, a)
    compare(real_paddle, lambda P: lambda x: x.view([4, 6]) * 1.0, a)
    compare(real_paddle, lambda P: lambda x: x.view_as(P.zeros([6, 4])) * 1.0, a)
    np.testing.assert_array_equal(ours.to_tensor(a).view("int32").numpy(), real_paddle.to_tensor(a).view("int32"))
    with pytest.raises(ShapeError, match="mT"):
        _ = ours.to_tensor(r(3)).mT


def test_new_creation_methods_and_facts(real_paddle):
    for mod in (ours, real_paddle):
        x = mod.to_tensor(r(2, 3))
        full = x.new_full([2, 2], 3.0)
        assert full.dtype == x.dtype and full.numpy().tolist() == [[3, 3], [3, 3]] and full.stop_gradient
        assert x.new_zeros([3]).numpy().sum() == 0 and x.new_ones([2], dtype="int64").numpy().dtype == np.int64
        assert x.new_empty([4, 1]).shape == [4, 1]
        assert not x.new_zeros([1], requires_grad=True).stop_gradient
        assert x.element_size() == 4 and x.contiguous() is not None and x.is_contiguous()


def test_dtype_shortcuts_match_paddle(real_paddle):
    a = r(3)
    for method in ("float", "double", "half", "int", "long", "bool"):
        got = getattr(ours.to_tensor(a), method)()
        want = getattr(real_paddle.to_tensor(a), method)()
        assert got.dtype == np.dtype(str(want.numpy().dtype)), method
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert ours.to_tensor(a).type_as(ours.zeros([1], dtype="float64")).dtype == np.float64
