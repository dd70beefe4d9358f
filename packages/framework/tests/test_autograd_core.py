import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda a, b: a + b, [(3, 4), (4,)]),
        (lambda a, b: a - b, [(2, 1, 4), (3, 1)]),
        (lambda a, b: a * b, [(3, 4), (3, 1)]),
        (lambda a, b: a / (b * b + 1), [(3, 4), (1, 4)]),
        (lambda a, b: paddle.maximum(a, b), [(5,), (5,)]),
        (lambda a, b: paddle.matmul(a, b), [(3, 4), (4, 2)]),
        (lambda a, b: paddle.matmul(a, b, transpose_x=True, transpose_y=True), [(2, 4, 3), (5, 4)]),
        (lambda a, b: paddle.matmul(a, b), [(4,), (2, 4, 3)]),
        (lambda a, b: paddle.matmul(a, b), [(2, 3, 4), (4,)]),
        (lambda a, b: paddle.concat([a, b], axis=-1), [(2, 3), (2, 1)]),
        (lambda a, b: paddle.where(a > 0, a, b), [(3, 3), (3,)]),
    ],
)
def test_binary_gradients_match_finite_differences(gradcheck, fn, shapes):
    gradcheck(fn, *[r(*s) for s in shapes])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.exp(),
        lambda x: (x * x + 1).log(),
        lambda x: (x * x + 1).sqrt(),
        lambda x: x.tanh(),
        lambda x: x.sin() * x.cos(),
        lambda x: paddle.erf(x),
        lambda x: x**3,
        lambda x: 2.0**x,
        lambda x: paddle.clip(x, -0.5, 0.5),
        lambda x: x.sum(axis=1),
        lambda x: x.mean(axis=[0, 2], keepdim=True),
        lambda x: x.max(axis=-1),
        lambda x: x.prod(axis=1),
        lambda x: x.var(axis=1),
        lambda x: x.std(),
        lambda x: paddle.logsumexp(x, axis=1),
        lambda x: paddle.cumsum(x, axis=1),
        lambda x: x.reshape([0, -1]),
        lambda x: x.transpose([2, 0, 1]),
        lambda x: paddle.stack([x, x * 2], axis=1),
        lambda x: x.flatten(1),
    ],
)
def test_unary_gradients_match_finite_differences(gradcheck, fn):
    gradcheck(fn, r(2, 3, 4))


def test_prod_gradient_with_a_zero(gradcheck):
    x = r(3, 4)
    x[1, 2] = 0.0
    gradcheck(lambda t: t.prod(axis=1), x)


def test_gradients_accumulate_and_clear():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 7.0])
    x.clear_gradient()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    x.clear_gradient(set_to_zero=False)
    assert x.grad is None


def test_graph_is_freed_unless_retained():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_stop_gradient_and_no_grad():
    x = paddle.to_tensor([1.0, 2.0])
    assert x.stop_gradient
    w = paddle.to_tensor([3.0, 4.0], stop_gradient=False)
    y = x * w
    assert not y.stop_gradient
    with paddle.no_grad():
        z = x * w
    assert z.stop_gradient and z.is_leaf

    @paddle.no_grad()
    def f(a):
        return a * w

    assert f(x).stop_gradient
    with pytest.raises(RuntimeError, match="stop_gradient=True"):
        z.sum().backward()


def test_one_no_grad_guard_entered_twice_restores_recording():
    """A module-level guard entered again while entered (Paddle's leaves recording off after this)."""
    guard, again = paddle.no_grad(), paddle.enable_grad()
    with guard:
        with guard:
            with again:
                assert paddle.is_grad_enabled()
        assert not paddle.is_grad_enabled()
    assert paddle.is_grad_enabled()

    @paddle.enable_grad()
    def g():
        return paddle.is_grad_enabled()

    with paddle.no_grad():
        assert g() and not paddle.is_grad_enabled()


def test_hooks_modify_gradients():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    h = x * 2
    h.register_hook(lambda g: g * 10)
    handle = x.register_hook(lambda g: g + 1)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 21.0])
    handle.remove()
    x.clear_gradient(False)
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_paddle_grad_leaves_dot_grad_alone():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = paddle.to_tensor([3.0], stop_gradient=False)
    h = x * x
    out = (h * 3).sum()
    gx, gh = paddle.grad(out, [x, h], retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(gh.numpy(), [3.0, 3.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        paddle.grad(out, [y], retain_graph=True)
    assert paddle.grad(out, [y], allow_unused=True) == [None]


def test_dtype_rules():
    i = paddle.to_tensor([1, 2])
    assert i.dtype == paddle.int64
    assert (i * 0.5).dtype == paddle.float32
    f = paddle.to_tensor([1.0])
    assert f.dtype == paddle.float32 and (f + 1).dtype == paddle.float32
    assert paddle.to_tensor(np.zeros(2)).dtype == paddle.float64
    assert f.astype("float64").dtype == "float64"
    assert paddle.sum(paddle.to_tensor([True, True])).dtype == paddle.int64
    with pytest.raises(DTypeError, match="unknown dtype"):
        paddle.zeros([2], dtype="floaty")


def test_shape_errors_name_the_op_and_shapes():
    a = paddle.ones([2, 3])
    with pytest.raises(ShapeError, match=r"matmul: .*x\[2, 3\].*y\[2, 3\]"):
        paddle.matmul(a, a)
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        a + paddle.ones([4])
    with pytest.raises(ShapeError, match="cannot reshape"):
        a.reshape([4, -1])
    with pytest.raises(ShapeError, match="axis 3 is out of range"):
        a.sum(axis=3)


def test_size_zero_and_size_one_dims(gradcheck):
    empty = paddle.zeros([0, 3])
    assert empty.sum(axis=0).shape == [3]
    gradcheck(lambda x: (x * 2).sum(axis=0), r(1, 3))
    gradcheck(lambda x, y: x + y, r(0, 3), r(3))
