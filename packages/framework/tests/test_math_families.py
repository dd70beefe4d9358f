"""More math (ops/pointwise.py, scan.py, products.py, diagonal.py, gather_scatter.py): outputs and
gradients against real Paddle, finite differences, edge shapes and typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import DTypeError, ShapeError
from paddlectl.framework.ops import diagonal, gather_scatter, pointwise, products, scan

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


def pos(*shape):
    return RNG.uniform(0.1, 0.9, shape).astype("float32")


BINARY = [
    (lambda P, x, y: P.atan2(x, y), (2, 3), (3,)),
    (lambda P, x, y: P.fmax(x, y), (2, 3), (2, 3)),
    (lambda P, x, y: P.fmin(x, y), (2, 1), (1, 3)),
    (lambda P, x, y: P.lerp(x, y, 0.3), (2, 3), (2, 3)),
    (lambda P, x, y: P.lerp(x, y, y.abs()), (2, 3), (2, 3)),
    (lambda P, x, y: P.cross(x, y), (3, 2), (3, 2)),
    (lambda P, x, y: P.cross(x, y, axis=-1), (2, 3), (2, 3)),
    (lambda P, x, y: P.outer(x, y), (3,), (4,)),
    (lambda P, x, y: P.inner(x, y), (2, 3), (4, 3)),
    (lambda P, x, y: P.kron(x, y), (2, 3), (2, 2)),
    (lambda P, x, y: P.kron(x, y), (2,), (2, 1, 3)),
    (lambda P, x, y: P.mv(x, y), (2, 3), (3,)),
    (lambda P, x, y: P.dist(x, y, p=3), (2, 3), (2, 3)),
    (lambda P, x, y: P.dist(x, y, p=float("inf")), (2, 3), (3,)),
    (lambda P, x, y: P.addmm(x, y, y.T, beta=0.5, alpha=2.0), (2, 2), (2, 3)),
    (lambda P, x, y: P.diff(x, append=y), (2, 3), (2, 3)),
]


@pytest.mark.parametrize("fn,sx,sy", BINARY)
def test_binary_match_paddle(real_paddle, fn, sx, sy):
    compare(real_paddle, lambda P: lambda x, y: fn(P, x, y), r(*sx), r(*sy), rtol=1e-5, atol=1e-5)


UNARY = [
    (lambda P, x: P.frac(x * 3), r(2, 3)),
    (lambda P, x: P.logit(x), pos(2, 3)),
    (lambda P, x: P.logit(x, eps=0.2), pos(2, 3)),
    (lambda P, x: P.cumprod(x, dim=1), r(2, 4)),
    (lambda P, x: P.cumprod(x, dim=0), np.array([[1.0, 2.0], [0.0, 3.0], [2.0, 0.0], [0.5, 1.5]], "float32")),
    (lambda P, x: P.cumprod(x), r(2, 3)),
    (lambda P, x: P.diagonal(x), r(3, 4)),
    (lambda P, x: P.diagonal(x, offset=1, axis1=-1, axis2=0), r(3, 2, 4)),
    (lambda P, x: P.diagonal(x, offset=-1), r(3, 3)),
    (lambda P, x: P.diag(x), r(3)),
    (lambda P, x: P.diag(x, offset=-1, padding_value=2), r(3)),
    (lambda P, x: P.diag(x, offset=1), r(3, 4)),
    (lambda P, x: P.trace(x), r(3, 4)),
    (lambda P, x: P.trace(x, offset=1, axis1=1, axis2=2), r(2, 3, 3)),
    (lambda P, x: P.nansum(x, axis=1), np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, 1.0]], "float32")),
    (lambda P, x: P.nanmean(x, axis=-1, keepdim=True), np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 1.0]], "float32")),
    (lambda P, x: P.diff(x, n=2, axis=0), r(4, 2)),
    (lambda P, x: P.moveaxis(x, [0, 1], [2, 0]), r(2, 3, 4)),
    (lambda P, x: P.moveaxis(x, -1, 0), r(2, 3, 4)),
    (lambda P, x: P.unflatten(x, 1, [2, -1]), r(3, 6)),
    (lambda P, x: P.repeat_interleave(x, 2, axis=1), r(2, 3)),
    (lambda P, x: P.repeat_interleave(x, P.to_tensor([1, 0, 2]), axis=0), r(3, 2)),
    (lambda P, x: P.repeat_interleave(x, 2), r(2, 2)),
    (lambda P, x: P.take(x, P.to_tensor([[0, 5], [-1, 2]])), r(2, 3)),
    (lambda P, x: P.take(x, P.to_tensor([7, -8]), mode="wrap"), r(2, 3)),
    (lambda P, x: P.take(x, P.to_tensor([9, -3]), mode="clip"), r(2, 3)),
    (lambda P, x: P.index_add(x, P.to_tensor([0, 2, 0]), 1, x[:, :3] * 2.0, alpha=0.5), r(2, 4)),
    (lambda P, x: P.index_fill(x, P.to_tensor([1, 3]), 1, -1.0), r(2, 4)),
    (lambda P, x: P.stack(P.meshgrid(x[0], x[1, :2]), 0), r(2, 3)),
]


@pytest.mark.parametrize("fn,a", UNARY)
def test_unary_match_paddle(real_paddle, fn, a):
    compare(real_paddle, lambda P: lambda x: fn(P, x), a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "fn,arrays",
    [
        (lambda x, y: ours.atan2(x, y), [r(2, 3), r(3)]),
        (lambda x: ours.cumprod(x, dim=1), [np.array([[1.0, 0.0, 2.0, 3.0], [0.0, 2.0, 0.0, 1.0]])]),
        (lambda x: ours.cumprod(x, dim=0), [r(3, 2)]),
        (lambda x, y: ours.cross(x, y, axis=0), [r(3, 2), r(3, 2)]),
        (lambda x: ours.diagonal(x, 1, 0, 2), [r(3, 2, 4)]),
        (lambda x: ours.diag(x, offset=2), [r(3)]),
        (lambda x, v: ours.index_add(x, ours.to_tensor([1, 1]), 0, v), [r(3, 2), r(2, 2)]),
        (lambda x, y: ours.kron(x, y), [r(2, 2), r(3)]),
        (lambda x: ours.logit(x, 0.3), [pos(4)]),
    ],
)
def test_gradients_by_finite_differences(gradcheck, fn, arrays):
    gradcheck(fn, *arrays)


def test_non_differentiable_helpers_match_paddle(real_paddle):
    a, b = r(2, 3), r(2, 3)
    b2 = a + 1e-7
    for P in (ours, real_paddle):
        x, y, z = P.to_tensor(a), P.to_tensor(b), P.to_tensor(b2)
        assert bool(P.allclose(x, z)) and not bool(P.allclose(x, y))
        assert P.allclose(x, z).shape == [] and P.equal_all(x, x).shape == []
        assert bool(P.equal_all(x, x)) and not bool(P.equal_all(x, y))
        np.testing.assert_array_equal(P.isclose(x, z).numpy(), np.ones((2, 3), bool))
    c = np.array([[0, 1, 2], [3, 0, 0]], "int64")
    np.testing.assert_array_equal(
        ours.count_nonzero(ours.to_tensor(c), axis=1).numpy(),
        real_paddle.count_nonzero(real_paddle.to_tensor(c), axis=1),
    )
    np.testing.assert_array_equal(
        ours.mod(ours.to_tensor(c), ours.to_tensor(2)).numpy(), real_paddle.mod(real_paddle.to_tensor(c), 2).numpy()
    )
    got = ours.to_tensor(np.array([5, 7], "int64")).frac()
    assert got.dtype == np.int64 and not got.numpy().any()


def test_edge_shapes():
    empty = ours.zeros([0, 3])
    assert ours.diagonal(empty).shape == [0]
    assert ours.cumprod(empty, dim=0).shape == [0, 3]
    assert ours.outer(ours.zeros([0]), ours.ones([2])).shape == [0, 2]
    assert ours.nansum(empty).item() == 0
    one = ours.to_tensor([[2.0]])
    assert ours.trace(one).item() == 2.0 and ours.diff(one, axis=1).shape == [1, 0]


def test_errors_are_typed():
    with pytest.raises(ShapeError, match="size 3"):
        ours.cross(ours.rand([2, 4]), ours.rand([2, 4]), axis=1)
    with pytest.raises(ShapeError, match="no dim of size 3"):
        ours.cross(ours.rand([2, 4]), ours.rand([2, 4]))
    with pytest.raises(ShapeError, match="axis1 and axis2"):
        ours.diagonal(ours.rand([3, 3]), axis1=1, axis2=-1)
    with pytest.raises(ShapeError, match="1-D or 2-D"):
        ours.diag(ours.rand([2, 2, 2]))
    with pytest.raises(ShapeError, match="out of range"):
        ours.take(ours.rand([2, 3]), ours.to_tensor([6]))
    with pytest.raises(DTypeError, match="integer"):
        ours.index_fill(ours.rand([2, 3]), ours.to_tensor([0.5]), 0, 1.0)
    with pytest.raises(ShapeError, match="value must have shape"):
        ours.index_add(ours.rand([2, 3]), ours.to_tensor([0]), 0, ours.rand([2, 3]))
    with pytest.raises(ShapeError, match="repeats"):
        ours.repeat_interleave(ours.rand([3]), ours.to_tensor([1, 2]))
    with pytest.raises(ShapeError, match="does not multiply"):
        ours.unflatten(ours.rand([2, 6]), 1, [4, 2])
    with pytest.raises(ShapeError, match="same length"):
        ours.moveaxis(ours.rand([2, 3]), [0, 1], [1])
    with pytest.raises(ShapeError, match="last dims"):
        ours.inner(ours.rand([2, 3]), ours.rand([2, 4]))


def test_shape_rules_on_symbolic_dims():
    f = np.dtype("float32")
    assert diagonal.diagonal_op.infer(Spec(("N", 3, 3), f), offset=0, axis1=1, axis2=2).shape == ("N", 3)
    assert products.cross_op.infer(Spec(("N", 3), f), Spec((1, 3), f), axis=1).shape == ("N", 3)
    assert scan.cumprod_op.infer(Spec(("N", 4), f), axis=1).shape == ("N", 4)
    assert pointwise.atan2_op.infer(Spec(("N", 1), f), Spec((1, "M"), f)).shape == ("N", "M")
    assert gather_scatter.index_add_op.infer(Spec(("N", 4), f), None, None, axis=1, alpha=1.0).shape == ("N", 4)


@pytest.mark.parametrize(
    "fn", [lambda P, x: P.logcumsumexp(x, axis=1), lambda P, x: P.logcumsumexp(x * 30), lambda P, x: x.logcumsumexp(0)]
)
def test_logcumsumexp_matches_paddle_and_finite_differences(real_paddle, gradcheck, fn):
    # x * 30 spans e^-90..e^90: two float32 implementations' gradients differ by up to ~2e-5 relative
    compare(real_paddle, lambda P: lambda x: fn(P, x), r(3, 4), rtol=1e-5, atol=1e-5, grad_rtol=5e-5)
    gradcheck(lambda x: fn(ours, x), r(2, 3))
