"""Alternative spellings and small compositions (ops/pointwise.py, predicates.py, rearrange.py,
construct.py) against real Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _both_broadcast(P, x, y):
    a, b = P.broadcast_tensors([x, y])
    return a * 2.0 + b


DIFFERENTIABLE = [
    (lambda P, x, y: P.clamp(x, -0.5, 0.5) + P.mul(x, y) + P.sub(x, y, alpha=2) + P.div(x, y.abs() + 1), (2, 3)),
    (lambda P, x, y: P.div(x, y.abs() + 0.5, rounding_mode="floor") + P.true_divide(x, y.abs() + 1), (2, 3)),
    (lambda P, x, y: P.logaddexp(x, y * 3) + P.hypot(x, y), (2, 3)),
    (lambda P, x, y: P.acosh(x.abs() + 1.5) + P.asinh(x) + P.atanh(y.tanh() * 0.9), (2, 3)),
    (lambda P, x, y: P.deg2rad(x) + P.rad2deg(y) + P.negative(x) + P.positive(y), (2, 3)),
    (lambda P, x, y: P.heaviside(x, y) + P.copysign(x, y), (2, 3)),
    (lambda P, x, y: x.permute(1, 0) + P.permute(y, [1, 0]) + P.swapaxes(x, 0, 1), (2, 3)),
    (lambda P, x, y: P.ravel(x) + P.cat([x, y], 1).ravel()[:6], (2, 3)),
    (lambda P, x, y: P.tensordot(x, y.T, 1), (2, 3)),
    (lambda P, x, y: P.tensordot(x, y, [[0, 1], [0, 1]]), (2, 3)),
    (lambda P, x, y: P.rot90(x) + P.rot90(y, k=3), (3, 3)),
    (lambda P, x, y: P.rot90(x, k=2, axes=[1, 0]), (2, 3)),
    (lambda P, x, y: P.narrow(x, 1, 1, 2) + P.narrow(y, 1, -2, 2), (2, 3)),
    (lambda P, x, y: P.hstack([x, y]) * 1.0, (2, 3)),
    (lambda P, x, y: P.vstack([x[0], y[0]]) * 1.0, (2, 3)),
    (lambda P, x, y: P.dstack([x, y]) * 1.0, (2, 3)),
    (lambda P, x, y: P.column_stack([x[0], y[0]]) * 1.0, (2, 3)),
    (lambda P, x, y: P.tensor_split(x, 2, axis=1)[0] + P.tensor_split(y, [1], axis=1)[0], (2, 3)),
    (lambda P, x, y: P.block_diag([x, y[0:1, :2]]) * 1.0, (2, 3)),
    (lambda P, x, y: P.cartesian_prod([x[0], y[0, :2]]) * 1.0, (2, 3)),
    (lambda P, x, y: P.nan_to_num(P.log(x)) * y, (2, 3)),
    # both outputs used: real Paddle 3.3.1 segfaults in backward when only one of them is
    (lambda P, x, y: _both_broadcast(P, x, y[0]), (2, 3)),
]


@pytest.mark.parametrize("fn,shape", DIFFERENTIABLE)
def test_compositions_match_paddle(real_paddle, fn, shape):
    compare(real_paddle, lambda P: lambda x, y: fn(P, x, y), r(*shape), r(*shape), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{}, {"offset": 1, "dim1": 0, "dim2": 2}, {"offset": -1, "dim1": -1, "dim2": 0}])
def test_diag_embed_matches_paddle_and_finite_differences(real_paddle, gradcheck, kwargs):
    # Paddle's diag_embed records no gradient; ours is differentiable, checked by finite differences.
    compare(real_paddle, lambda P: lambda x: P.diag_embed(x, **kwargs), r(2, 3), grads=False)
    gradcheck(lambda x: ours.diag_embed(x, **kwargs), r(2, 3))


def test_predicates_and_int_division_match_paddle(real_paddle):
    a = np.array([-2.0, -0.0, 0.0, np.inf, -np.inf, 3.0], "float32")
    i, j = np.array([5, -5, 7], "int64"), np.array([2, 2, -3], "int64")
    for name in ("signbit", "isneginf", "isposinf", "isreal", "sgn"):
        got, want = getattr(ours, name)(ours.to_tensor(a)), getattr(real_paddle, name)(real_paddle.to_tensor(a))
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
    for mode in ("floor", "trunc"):
        got = ours.div(ours.to_tensor(i), ours.to_tensor(j), rounding_mode=mode)
        want = real_paddle.div(real_paddle.to_tensor(i), real_paddle.to_tensor(j), rounding_mode=mode)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = ours.isin(ours.to_tensor(i), ours.to_tensor(j), invert=True)
    np.testing.assert_array_equal(
        got.numpy(), real_paddle.isin(real_paddle.to_tensor(i), real_paddle.to_tensor(j), invert=True)
    )
    x, y = ours.to_tensor(a), ours.to_tensor(a[::-1].copy())
    for name in ("eq", "ne", "ge", "gt", "le", "lt", "greater", "less"):
        want = getattr(real_paddle, name)(real_paddle.to_tensor(a), real_paddle.to_tensor(a[::-1].copy()))
        np.testing.assert_array_equal(getattr(ours, name)(x, y).numpy(), want.numpy(), err_msg=name)
        np.testing.assert_array_equal(getattr(x, name)(y).numpy(), want.numpy(), err_msg=name)


def test_indices_spaces_and_shapes_match_paddle(real_paddle):
    for fn in (
        lambda P: P.tril_indices(4, 3, -1),
        lambda P: P.triu_indices(3, 4, 1),
        lambda P: P.logspace(0, 2, 5, base=2.0),
        lambda P: P.argwhere(P.to_tensor([[0, 1], [2, 0]])),
        lambda P: P.is_empty(P.zeros([0, 2])),
        lambda P: P.take_along_dim(P.to_tensor([[1.0, 2.0], [3.0, 4.0]]), P.to_tensor([[1], [0]]), 1),
    ):
        np.testing.assert_allclose(fn(ours).numpy(), fn(real_paddle).numpy(), rtol=1e-6)
    assert ours.broadcast_shape([2, 1, 3], [4, 3]) == real_paddle.broadcast_shape([2, 1, 3], [4, 3])
    assert [t.shape for t in ours.atleast_3d(ours.rand([2]), ours.rand([]))] == [[1, 2, 1], [1, 1, 1]]
    x = ours.rand([2, 3])
    assert ours.is_floating_point(x) and not ours.is_integer(x) and not ours.is_complex(x)
    assert ours.rand_like(x).shape == [2, 3] and ours.randn_like(x, dtype="float64").dtype == np.float64
    low = ours.randint_like(ours.zeros([100], dtype="int64"), 3, 5).numpy()
    assert low.min() >= 3 and low.max() < 5
    assert [t.shape for t in ours.unstack(x, 1)] == [[2]] * 3
    assert [t.shape for t in ours.hsplit(x, [1])] == [[2, 1], [2, 2]]
    assert [t.shape for t in ours.vsplit(x, 2)] == [[1, 3], [1, 3]]


def test_requires_grad_and_ndimension():
    x = ours.rand([2, 3])
    assert not x.requires_grad and x.ndimension() == 2
    assert x.requires_grad_() is x and x.requires_grad and not x.stop_gradient
    x.requires_grad = False
    assert x.stop_gradient


def test_errors_are_typed():
    with pytest.raises(ShapeError, match="out of range"):
        ours.narrow(ours.rand([2, 3]), 1, 2, 2)
    with pytest.raises(ShapeError, match="contracted"):
        ours.tensordot(ours.rand([2, 3]), ours.rand([4, 3]), 1)
    with pytest.raises(ValueError, match="rounding_mode"):
        ours.div(ours.rand([2]), ours.rand([2]), rounding_mode="round")
    with pytest.raises(ShapeError, match="vsplit"):
        ours.vsplit(ours.rand([3]), 3)
