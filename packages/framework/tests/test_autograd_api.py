"""``paddle.autograd`` against real PaddlePaddle 3.3.1: jacobian/hessian on Paddle's docstring
examples and random cases (batched too), PyLayer forward/backward (docstring example,
straight-through estimator, non-differentiable outputs), higher derivatives through a PyLayer,
PyLayer inside ``jit.to_static``, and ``autograd.backward`` over several roots."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import CheckpointError, ConversionError, ShapeError

rng = np.random.default_rng(11)


def _leaves(lib, *arrays):
    return [lib.to_tensor(a, stop_gradient=False) for a in arrays]


def _close(got, want, rtol=1e-5, atol=1e-6, what=""):
    np.testing.assert_allclose(np.asarray(got.numpy()), np.asarray(want.numpy()), rtol=rtol, atol=atol, err_msg=what)
    assert list(got.shape) == list(want.shape), what


# ----- jacobian / hessian -------------------------------------------------------------------------
def _docstring_jacobian(lib, a, b):
    x1, x2 = _leaves(lib, a, b)
    return lib.autograd.jacobian(x1 + x2, (x1, x2))


def _docstring_hessian(lib, a, b):
    x1, x2 = _leaves(lib, a, b)
    return lib.autograd.hessian(x1.sum() + x2.sum(), (x1, x2))


def test_docstring_examples_match_paddle(real_paddle):
    a, b, c = (rng.standard_normal(n).astype("float32") for n in (3, 3, 4))
    for got, want in zip(_docstring_jacobian(ours, a, b), _docstring_jacobian(real_paddle, a, b), strict=True):
        assert got.shape == want.shape == [3, 3]
        _close(got[:], want[:])
    got, want = _docstring_hessian(ours, a, c), _docstring_hessian(real_paddle, a, c)
    for i in range(2):
        for j in range(2):
            assert got[i][j].shape == want[i][j].shape
            _close(got[i][j][:], want[i][j][:])


def _nonlinear(lib, x, w):
    return lib.tanh(lib.matmul(w, x * x)) + x.sum() * x


def _nonlinear_batched(lib, x, w):
    return lib.tanh(lib.matmul(x * x, w)) + (x[:, :1] * x).sum(axis=1, keepdim=True)


@pytest.mark.parametrize(
    "index",
    [slice(None), 1, -1, slice(1, 3), slice(None, None, 2), (slice(None), 0), (2, slice(1, 3)), (0, -1)],
    ids=str,
)
def test_jacobian_rows_and_slices_match_paddle(index, real_paddle):
    x, w = rng.standard_normal(4), rng.standard_normal((4, 4))

    def jac(lib):
        (xt,) = _leaves(lib, x)
        return lib.autograd.jacobian(_nonlinear(lib, xt, lib.to_tensor(w)), xt)

    got, want = jac(ours), jac(real_paddle)
    assert got.shape == want.shape == [4, 4]
    _close(got[index], want[index], what=str(index))


@pytest.mark.parametrize(
    "index", [slice(None), 1, (slice(None), 1), (slice(None), slice(0, 2), 1), (-1, 0, 2)], ids=str
)
def test_batched_jacobian_matches_paddle(index, real_paddle):
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))

    def jac(lib):
        (xt,) = _leaves(lib, x)
        return lib.autograd.jacobian(_nonlinear_batched(lib, xt, lib.to_tensor(w)), xt, batch_axis=0)

    got, want = jac(ours), jac(real_paddle)
    assert got.shape == want.shape == [5, 2, 3]
    _close(got[index], want[index], what=str(index))


@pytest.mark.parametrize("shapes", [((), (3,)), ((3,), ()), ((), ())], ids=str)
def test_zero_dim_sides_drop_their_axis_like_paddle(shapes, real_paddle):
    ys_shape, xs_shape = shapes
    x = rng.standard_normal(xs_shape)

    def jac(lib):
        (xt,) = _leaves(lib, x)
        y = (xt * xt).sum() if ys_shape == () else xt.sin() * lib.to_tensor(np.arange(1.0, 4.0))
        return lib.autograd.jacobian(y, xt)

    got, want = jac(ours), jac(real_paddle)
    assert got.shape == want.shape
    _close(got._evaluate_all(), want._evaluate_all())
    if got.shape:
        _close(got[1], want[1])


def test_tuple_ys_and_xs_nest_like_paddle(real_paddle):
    a, b = rng.standard_normal(3), rng.standard_normal(2)

    def jac(lib):
        x1, x2 = _leaves(lib, a, b)
        return lib.autograd.jacobian((x1 * x2.sum(), x2.exp()), (x1, x2))

    got, want = jac(ours), jac(real_paddle)
    assert len(got) == len(want) == 2 and all(len(row) == 2 for row in got)
    for i in range(2):
        for j in range(2):
            assert got[i][j].shape == want[i][j].shape
            _close(got[i][j][:], want[i][j][:], what=f"J[{i}][{j}]")


@pytest.mark.parametrize("batch_axis", [None, 0])
def test_hessian_matches_paddle(batch_axis, real_paddle):
    x = rng.standard_normal((4, 3) if batch_axis == 0 else 3)
    m = rng.standard_normal((3, 3))

    def hess(lib):
        (xt,) = _leaves(lib, x)
        y = (lib.tanh(xt) * lib.matmul(xt, lib.to_tensor(m))).sum(axis=-1) + (xt**3).sum(axis=-1)
        return lib.autograd.hessian(y, xt, batch_axis=batch_axis)

    got, want = hess(ours), hess(real_paddle)
    assert got.shape == want.shape
    assert isinstance(got, ours.autograd.Hessian)
    _close(got[:], want[:])


def test_rows_are_evaluated_on_demand_and_cached():
    (x,) = _leaves(ours, rng.standard_normal(5))
    J = ours.autograd.jacobian(x.sin() * 2.0, x)
    assert J._rows == {}
    J[1:3]
    assert sorted(J._rows) == [1, 2]
    first = J._rows[1]
    J[1]
    assert J._rows[1] is first
    np.testing.assert_allclose(J.numpy(), np.diag(2 * np.cos(x.numpy())), rtol=1e-12)
    assert (J * 2).shape == [5, 5]  # arithmetic acts on the whole matrix, as in Paddle


def test_jacobian_input_errors(real_paddle):
    for lib in (ours, real_paddle):
        (x,) = _leaves(lib, rng.standard_normal((2, 3)))
        with pytest.raises(ValueError):
            lib.autograd.jacobian(x * 2, x)  # 2-D without a batch axis
        with pytest.raises(ValueError):
            lib.autograd.jacobian(x * 2, x, batch_axis=1)
        with pytest.raises(ValueError):
            lib.autograd.hessian(x * 2, x)  # more than one element
    (x,) = _leaves(ours, rng.standard_normal(3))
    with pytest.raises(IndexError):
        ours.autograd.jacobian(x * 2, x)[..., 0]
    with pytest.raises(IndexError):
        ours.autograd.jacobian(x * 2, x)[3]
    with pytest.raises(TypeError):
        ours.autograd.jacobian([1.0, 2.0], x)


# ----- PyLayer ------------------------------------------------------------------------------------
def _cus_tanh(lib):
    class cus_tanh(lib.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            y = lib.tanh(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            (y,) = ctx.saved_tensor()
            return dy * (1 - lib.square(y))

    return cus_tanh


def _straight_through(lib):
    """Rounds in forward; passes the gradient where |x| <= 1 (a clipped straight-through estimator)."""

    class RoundSTE(lib.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x, scale, offset=0.0):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return lib.round(x * scale) / scale + offset

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensor()
            return g * (x.abs() <= 1.0).astype(g.dtype)

    return RoundSTE


def test_pylayer_docstring_example_matches_paddle(real_paddle):
    data = rng.standard_normal((2, 3))

    def run(lib):
        (x,) = _leaves(lib, data)
        z = _cus_tanh(lib).apply(x)
        z.mean().backward()
        return z, x.grad

    (z, g), (z_want, g_want) = run(ours), run(real_paddle)
    _close(z, z_want)
    _close(g, g_want)


def test_straight_through_estimator_with_args_and_kwargs_matches_paddle(real_paddle):
    data = rng.uniform(-2, 2, (4, 5)).astype("float32")
    weights = rng.standard_normal((4, 5)).astype("float32")

    def run(lib):
        (x,) = _leaves(lib, data)
        y = _straight_through(lib).apply(x, 4.0, offset=0.5)
        (y * lib.to_tensor(weights)).sum().backward()
        return y, x.grad

    (y, g), (y_want, g_want) = run(ours), run(real_paddle)
    _close(y, y_want)
    _close(g, g_want)
    assert 0 < np.count_nonzero(g.numpy()) < g.size  # the clip is exercised


def _two_outputs(lib):
    class Tanh(lib.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            a = x + x
            b = x + x + x
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            ctx.seen = grad_a.numpy().copy()
            return grad_b * 2.0

    return Tanh


def test_non_differentiable_output_gets_zero_gradient_like_paddle(real_paddle):
    def run(lib):
        (x,) = _leaves(lib, np.ones(3))
        layer = _two_outputs(lib)
        a, b = layer.apply(x)
        assert a.stop_gradient and not b.stop_gradient
        b.sum().backward()
        return x.grad

    _close(run(ours), run(real_paddle))


def test_second_derivative_through_pylayer_backward(real_paddle):
    data = rng.standard_normal(6)

    def run(lib):
        (x,) = _leaves(lib, data)
        y = _cus_tanh(lib).apply(x)
        (g,) = lib.grad(y.sum(), x, create_graph=True)
        (h,) = lib.grad((g * g).sum(), x)
        return g, h

    (g, h), (g_want, h_want) = run(ours), run(real_paddle)
    _close(g, g_want)
    _close(h, h_want)
    t = np.tanh(data)
    np.testing.assert_allclose(h.numpy(), 2 * (1 - t**2) * (-2 * t * (1 - t**2)), rtol=1e-10)


def test_pylayer_inside_to_static_matches_eager():
    """Forward is one py_layer op run by the executor; the hand-written backward is traced as ops."""
    w_data = rng.standard_normal((3, 2))
    ste = _straight_through(ours)

    def step(x):
        w = ours.to_tensor(w_data, stop_gradient=False)
        y = ours.matmul(ste.apply(x, 2.0), w)
        x_grad, w_grad = ours.grad((y * y).sum(), [x, w])
        return y, x_grad, w_grad

    def eager(data):
        x = ours.to_tensor(data, stop_gradient=False)
        return step(x)

    def traced_step(x):
        x.stop_gradient = False
        return step(x)

    static = ours.jit.to_static(traced_step, input_spec=[ours.static.InputSpec([None, 3], "float64", "x")])
    for batch in (4, 7):
        data = rng.uniform(-1.5, 1.5, (batch, 3))
        for got, want in zip(static(ours.to_tensor(data)), eager(data), strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_pylayer_errors_name_the_fix():
    class WrongCount(ours.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class WrongShape(WrongCount):
        @staticmethod
        def backward(ctx, g):
            return g.sum(), g

    class NotTensor(WrongCount):
        @staticmethod
        def forward(ctx, x, y):
            return 3.0

    x, y = _leaves(ours, np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="one per Tensor argument"):
        WrongCount.apply(x, y).sum().backward()
    with pytest.raises(ShapeError, match="argument 0"):
        WrongShape.apply(x, y).sum().backward()
    with pytest.raises(TypeError, match="must return a Tensor"):
        NotTensor.apply(x, y)
    with pytest.raises(NotImplementedError):
        ours.autograd.PyLayer.apply(x)


# ----- backward -----------------------------------------------------------------------------------
def test_backward_over_several_roots_matches_paddle(real_paddle):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], "float32")
    b = np.array([[3.0, 2.0], [3.0, 4.0]], "float32")
    g1 = np.array([[1.0, 2.0], [2.0, 3.0]], "float32")

    def run(lib):
        x = lib.to_tensor(a, stop_gradient=False)
        y = lib.to_tensor(b)
        z1, z2 = lib.matmul(x, y), lib.matmul(x, y)
        lib.autograd.backward([z1, z2], [lib.to_tensor(g1), None], retain_graph=True)
        first = x.grad.numpy().copy()
        x.clear_grad()
        lib.autograd.backward(z1)
        return first, x.grad.numpy()

    for got, want in zip(run(ours), run(real_paddle), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    (x,) = _leaves(ours, a)
    with pytest.raises(ValueError, match="one per tensor"):
        ours.autograd.backward([x * 2, x * 3], [None])
    with pytest.raises(TypeError):
        ours.autograd.backward([])


def test_saved_model_with_a_pylayer_is_refused_at_load(tmp_path):
    """The program runs in-process, but Python code cannot travel in a saved model: loading names why."""
    ste = _straight_through(ours)
    layer = ours.nn.Linear(3, 2)
    spec = [ours.static.InputSpec([None, 3], "float32", "x")]

    class Net(ours.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = layer

        def forward(self, x):
            return ste.apply(self.fc(x), 4.0)

    net = Net()
    x = ours.to_tensor(rng.standard_normal((5, 3)).astype("float32"))
    np.testing.assert_array_equal(ours.jit.to_static(net, input_spec=spec)(x).numpy(), net(x).numpy())
    ours.jit.save(net, str(tmp_path / "m"), input_spec=spec)
    with pytest.raises(CheckpointError, match="runs Python code"):
        ours.jit.load(str(tmp_path / "m"))


def test_to_static_follows_pylayer_output_dims_or_refuses():
    """An output dim equal to an input axis follows its symbolic size ([N, 3] -> [N]); one that
    follows the inputs some other way ([2N, 3]) is refused when the two traces disagree."""

    class RowSum(ours.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x.sum(axis=1)

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(1).expand([g.shape[0], 3])

    class Doubled(ours.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            return ours.concat([x, x])

        @staticmethod
        def backward(ctx, g):
            return g[: g.shape[0] // 2] + g[g.shape[0] // 2 :]

    spec = [ours.static.InputSpec([None, 3], "float64", "x")]
    row_sum = ours.jit.to_static(lambda x: RowSum.apply(x) * 2.0, input_spec=spec)
    for batch in (2, 6):
        data = rng.standard_normal((batch, 3))
        np.testing.assert_allclose(row_sum(ours.to_tensor(data)).numpy(), 2 * data.sum(axis=1), rtol=1e-12)
    with pytest.raises(ConversionError, match="py_layer"):
        ours.jit.to_static(lambda x: Doubled.apply(x) * 2.0, input_spec=spec)(
            ours.to_tensor(rng.standard_normal((4, 3)))
        )
