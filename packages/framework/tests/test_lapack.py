"""paddle.linalg: norms, inverse, determinants, solve, decompositions and einsum, against real
Paddle (outputs and gradients) and finite differences; typed errors on bad shapes."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.core.op import Spec
from paddlectl.framework.errors import ShapeError
from paddlectl.framework.ops import lapack, norms

RNG = np.random.default_rng(0)


def r(*shape):
    return RNG.standard_normal(shape).astype("float32")


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype("float32")


NORMS = [
    (lambda P, x: P.linalg.norm(x), (3, 4)),
    (lambda P, x: P.norm(x, p=2, axis=1), (3, 4)),
    (lambda P, x: P.norm(x, p=1, axis=-1, keepdim=True), (2, 3, 4)),
    (lambda P, x: P.norm(x, p=3.0, axis=0), (3, 4)),
    (lambda P, x: P.norm(x, p=float("inf"), axis=1), (3, 4)),
    (lambda P, x: P.norm(x, p="fro", axis=[0, 1]), (3, 4)),
    (lambda P, x: P.linalg.vector_norm(x, p=2.0, axis=[0, 2]), (2, 3, 4)),
    (lambda P, x: P.linalg.matrix_norm(x, p="fro"), (2, 3, 4)),
    (lambda P, x: P.linalg.matrix_norm(x, p=1), (2, 3, 4)),
    (lambda P, x: P.linalg.matrix_norm(x, p=float("inf"), keepdim=True), (2, 3, 4)),
    (lambda P, x: P.linalg.matrix_norm(x, p="nuc"), (3, 4)),
    (lambda P, x: P.linalg.matrix_norm(x, p=2), (2, 3, 4)),
    (lambda P, x: P.dist(x, x * 0.5 + 1.0, p=2), (3, 4)),
]


@pytest.mark.parametrize("fn,shape", NORMS)
def test_norms_match_paddle(real_paddle, fn, shape):
    compare(real_paddle, lambda P: lambda x: fn(P, x), r(*shape), rtol=1e-4, atol=1e-5)


def test_norm_gradients_by_finite_differences(gradcheck):
    gradcheck(lambda x: ours.norm(x, p=3.0, axis=1), r(3, 4))
    gradcheck(lambda x: ours.linalg.matrix_norm(x, p="nuc"), r(3, 4))
    gradcheck(lambda x: ours.linalg.matrix_norm(x, p=-1), r(3, 4))


def test_norm_at_zero_has_zero_gradient():
    x = ours.zeros([3], dtype="float64")
    x.stop_gradient = False
    ours.norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


SQUARE = [
    (lambda P, x: P.linalg.inv(x), (3, 3)),
    (lambda P, x: P.inverse(x), (2, 3, 3)),
    (lambda P, x: P.linalg.det(x), (2, 3, 3)),
    (lambda P, x: P.linalg.slogdet(x), (2, 3, 3)),
    (lambda P, x: P.linalg.matrix_power(x, 3), (3, 3)),
    (lambda P, x: P.linalg.matrix_power(x, -2), (3, 3)),
    (lambda P, x: P.linalg.matrix_power(x, 0), (3, 3)),
    (lambda P, x: P.linalg.pinv(x), (4, 3)),
    (lambda P, x: P.linalg.multi_dot([x, x.T, x]), (3, 3)),
]


@pytest.mark.parametrize("fn,shape", SQUARE)
def test_square_functions_match_paddle(real_paddle, fn, shape):
    a = r(*shape) + 3 * np.eye(shape[-1], dtype="float32")[: shape[-2]] if shape[-1] == shape[-2] else r(*shape)
    compare(real_paddle, lambda P: lambda x: fn(P, x), a, rtol=1e-4, atol=1e-4)


def test_solve_and_cholesky_match_paddle(real_paddle):
    a = spd(3, (2,))
    compare(real_paddle, lambda P: lambda x, y: P.linalg.solve(x, y), a, r(2, 3, 2), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x, y: P.linalg.solve(x, y), a[0], r(3), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x, y: P.linalg.solve(x, y, left=False), a[0], r(2, 3), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x: P.linalg.cholesky(x), a, rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x: P.linalg.cholesky(x, upper=True), a[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "fn,arrays",
    [
        (lambda x: ours.linalg.inv(x), [spd(3)]),
        (lambda x: ours.linalg.det(x), [spd(3, (2,))]),
        (lambda x: ours.linalg.slogdet(x), [spd(3)]),
        (lambda x, y: ours.linalg.solve(x, y), [spd(3, (2,)), r(1, 3, 2)]),
        (lambda x: ours.linalg.pinv(x), [r(4, 3)]),
        (lambda x: ours.linalg.pinv(x), [r(2, 4)]),
        (lambda x: ours.linalg.cholesky((x + x.mT) * 0.5), [spd(3)]),
    ],
)
def test_matrix_gradients_by_finite_differences(gradcheck, fn, arrays):
    gradcheck(fn, *arrays, rtol=1e-4, atol=1e-6)


def _sign_fixed_qr(P, x):
    q, rr = P.linalg.qr(x)
    return P.matmul(q, rr) + q.abs() + rr.abs().sum()


def test_decompositions_match_paddle(real_paddle):
    compare(real_paddle, lambda P: lambda x: _sign_fixed_qr(P, x), r(4, 3), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x: P.linalg.svd(x)[1], r(4, 3), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x: P.linalg.eigh(x)[0], spd(3), rtol=1e-4, atol=1e-5)
    compare(real_paddle, lambda P: lambda x: P.linalg.eigh(x)[1].abs(), spd(3), rtol=1e-4, atol=1e-4)
    compare(real_paddle, lambda P: lambda x: P.linalg.eigvalsh(x), spd(3), rtol=1e-4, atol=1e-5)
    # Paddle's eigvalsh gradient on a batch is not symmetric (one row differs from its column, where
    # finite differences agree with ours), so on batches only the values are compared.
    compare(real_paddle, lambda P: lambda x: P.linalg.eigvalsh(x, UPLO="U"), spd(3, (2,)), rtol=1e-4, grads=False)


def test_decomposition_gradients_by_finite_differences(gradcheck):
    gradcheck(lambda x: _sign_fixed_qr(ours, x), r(4, 3))
    gradcheck(lambda x: _sign_fixed_qr(ours, x), r(2, 3, 3))

    def svd_all(x):
        u, s, vh = ours.linalg.svd(x)
        return ours.matmul(u.abs(), vh.abs()).sum() + s.sum() * 2.0

    for shape in ((4, 3), (3, 4), (3, 3)):
        gradcheck(svd_all, r(*shape), rtol=1e-4, atol=1e-6)

    def eigh_all(a):
        w, v = ours.linalg.eigh((a + a.mT) * 0.5)
        return w * 2.0 + (v * v * v).sum(0)

    gradcheck(eigh_all, r(3, 3), rtol=1e-4, atol=1e-6)
    gradcheck(lambda a: ours.linalg.eigvalsh((a + a.mT) * 0.5, UPLO="U"), r(2, 3, 3), rtol=1e-4, atol=1e-6)


def test_bad_shapes_raise_typed_errors():
    with pytest.raises(ShapeError, match="square"):
        ours.linalg.inv(ours.rand([2, 3]))
    with pytest.raises(ShapeError, match="rank >= 2"):
        ours.linalg.svd(ours.rand([3]))
    with pytest.raises(ShapeError, match="y's rows"):
        ours.linalg.solve(ours.rand([3, 3]), ours.rand([2, 1]))
    with pytest.raises(ValueError, match="singular"):
        ours.linalg.inv(ours.zeros([2, 2]))
    with pytest.raises(ShapeError, match="two dims"):
        ours.linalg.matrix_norm(ours.rand([2, 3]), axis=[0])
    with pytest.raises(ValueError, match="matrix_norm"):
        ours.linalg.matrix_norm(ours.rand([2, 3]), p=3)


def test_shape_rules_on_symbolic_dims():
    f = np.dtype("float32")
    assert lapack.inv_op.infer(Spec(("N", 3, 3), f)).shape == ("N", 3, 3)
    assert lapack.det_op.infer(Spec(("N", 3, 3), f)).shape == ("N",)
    assert lapack.slogdet_op.infer(Spec(("N", 3, 3), f)).shape == (2, "N")
    assert [s.shape for s in lapack.svd_op.infer(Spec(("N", 4, 3), f))] == [("N", 4, 3), ("N", 3), ("N", 3, 3)]
    assert norms.p_norm_op.infer(Spec(("N", 4), f), p=2.0, axis=(1,), keepdim=False).shape == ("N",)
    assert lapack.solve_op.infer(Spec(("N", 3, 3), f), Spec((1, 3, 2), f)).shape == ("N", 3, 2)
    with pytest.raises(ShapeError):
        lapack.inv_op.infer(Spec(("N", 2, 3), f))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,ij->", [(2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 2), (2, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("ijk", [(2, 3, 1)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM)
def test_einsum_matches_paddle_and_finite_differences(real_paddle, gradcheck, equation, shapes):
    arrays = [r(*s) for s in shapes]
    compare(real_paddle, lambda P: lambda *xs: P.einsum(equation, *xs), *arrays, rtol=1e-5, atol=1e-5)
    gradcheck(lambda *xs: ours.einsum(equation, *xs), *arrays)


def test_einsum_errors():
    with pytest.raises(ShapeError, match="operands"):
        ours.einsum("ij,jk->ik", ours.rand([2, 3]))
    with pytest.raises(ShapeError, match="rank"):
        ours.einsum("ijk->i", ours.rand([2, 3]))
