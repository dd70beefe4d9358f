"""paddle.sparse math against real Paddle: values, patterns and layouts, and the gradients that reach
a sparse leaf (its values) and a dense operand."""

from __future__ import annotations

import numpy as np
import pytest
from _sparse_parity import assert_same, assert_same_gradient, backward_weighted, both, cotangent

import paddlectl.framework as ours
from paddlectl.framework.errors import LayoutError, ShapeError

X = np.array([[0, -1, 0, 2], [0, 0, -3, 0], [4, 5, 0, 0]], dtype="float32")
Y = np.array([[0, 0, 0, -2], [0, 2, -3, 0], [2, 3, 4, 8]], dtype="float32")
POSITIVE = np.array([[0, 0.5, 0, 0.25], [0, 0, 0.75, 0], [0.1, 0.9, 0, 0]], dtype="float32")
CUBE = (np.arange(24).reshape(2, 3, 4) * (np.arange(24).reshape(2, 3, 4) % 3 == 0)).astype("float32")

UNARY = ["sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sqrt", "square", "log1p", "abs", "expm1",
         "neg", "deg2rad", "rad2deg"]  # fmt: skip


def _leaf(p, array, layout):
    dense = p.to_tensor(array)
    x = dense.to_sparse_coo(array.ndim) if layout == "coo" else dense.to_sparse_csr()
    x.stop_gradient = False
    return x


def _through(p, fn, arrays, layout="coo"):
    """fn on sparse leaves; the result, and each leaf's gradient of a weighted sum of the result's values."""
    leaves = [_leaf(p, a, layout) for a in arrays]
    out = fn(p, *leaves)
    backward_weighted(p, out)
    return [out, *(leaf.grad for leaf in leaves)]


def _check(real_paddle, fn, arrays, layout="coo", rtol=1e-5, atol=1e-6):
    (out, *grads), (out_theirs, *grads_theirs) = both(real_paddle, lambda p: _through(p, fn, arrays, layout))
    assert_same(out, out_theirs, rtol=rtol, atol=atol)
    for a, b in zip(grads, grads_theirs, strict=True):
        assert_same_gradient(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_gradients(real_paddle, name, layout):
    _check(real_paddle, lambda p, x: getattr(p.sparse, name)(x), [POSITIVE], layout)


@pytest.mark.parametrize(
    "fn",
    [
        lambda p, x: p.sparse.pow(x, 3),
        lambda p, x: p.sparse.cast(x, "int32", "float64"),
        lambda p, x: p.sparse.nn.functional.relu(x),
        lambda p, x: p.sparse.nn.functional.relu6(x),
        lambda p, x: p.sparse.nn.functional.leaky_relu(x, 0.3),
        lambda p, x: p.sparse.nn.functional.softmax(x),
        lambda p, x: p.sparse.sum(x),
    ],
)
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_other_value_ops(real_paddle, fn, layout):
    _check(real_paddle, fn, [X], layout)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_binary_patterns_as_paddle(real_paddle, name, layout):
    """Add, subtract and multiply store the union of the patterns; divide stores every entry (0/0 is NaN)."""
    mine, theirs = both(real_paddle, lambda p: getattr(p.sparse, name)(_leaf(p, X, layout), _leaf(p, Y, layout)))
    assert_same(mine, theirs)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_binary_gradients(real_paddle, name, layout):
    """On one shared pattern (Paddle's subtract gradient of y is wrong when the patterns differ)."""
    _check(real_paddle, lambda p, x, y: getattr(p.sparse, name)(x, y), [X, X * 0.5 + (X != 0)], layout)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"axis": 0},
        {"axis": -1},
        {"axis": 1, "keepdim": True},
        {"axis": 0, "keepdim": True},
        {"keepdim": True},
        {"dtype": "float64"},
    ],  # fmt: skip
)
@pytest.mark.parametrize("sparse_dim", [1, 2])
def test_sum_shapes_as_paddle(real_paddle, kwargs, sparse_dim):
    mine, theirs = both(real_paddle, lambda p: p.sparse.sum(p.to_tensor(X).to_sparse_coo(sparse_dim), **kwargs))
    assert_same(mine, theirs)


@pytest.mark.parametrize(
    "fn",
    [
        lambda p, x: p.sparse.reshape(x, [4, 0, -1]),
        lambda p, x: p.sparse.transpose(x, [2, 0, 1]),
        lambda p, x: p.sparse.slice(x, [0, 2], [1, 1], [2, -1]),
        lambda p, x: p.sparse.sum(x, axis=1),
    ],
)
def test_structure_ops(real_paddle, fn):
    _check(real_paddle, fn, [CUBE])


@pytest.mark.parametrize("layout", ["coo", "csr"])
def test_mask_as_gradient_is_the_dense_inputs(real_paddle, layout):
    def program(p):
        x = p.to_tensor(Y, stop_gradient=False)
        out = p.sparse.mask_as(x, _leaf(p, X, layout))
        backward_weighted(p, out)
        return out, x.grad

    (out, grad), (out_theirs, grad_theirs) = both(real_paddle, program)
    assert_same(out, out_theirs)
    assert_same(grad, grad_theirs)


@pytest.mark.parametrize(("layout", "sparse_dim"), [("csr", 2), ("coo", 2), ("coo", 1)])
@pytest.mark.parametrize("kwargs", [{}, {"axis": -1}, {"axis": -1, "keepdim": True}])
def test_sum_forward(real_paddle, layout, sparse_dim, kwargs):
    """(Paddle's CSR sum-along-rows gradient puts one row's cotangent everywhere: forward only.)"""
    mine, theirs = both(
        real_paddle,
        lambda p: p.sparse.sum(
            p.to_tensor(X).to_sparse_coo(sparse_dim) if layout == "coo" else p.to_tensor(X).to_sparse_csr(), **kwargs
        ),
    )
    assert_same(mine, theirs)


@pytest.mark.parametrize("layout", ["coo", "csr"])
@pytest.mark.parametrize("batched", [False, True])
def test_matmul_gives_sparse_and_dense_gradients(layout, batched):
    """Paddle 3.3.1 has no CPU kernel for sparse matmul (the oracle is dense NumPy): the sparse
    operand's gradient is the dense one at its pattern, the dense operand's is X^T @ G."""
    left = np.stack([X, Y]) if batched else X
    right, g = cotangent((*left.shape[:-2], 4, 3), seed=1), cotangent((*left.shape[:-1], 3), seed=2)
    x, y = _leaf(ours, left, layout), ours.to_tensor(right, stop_gradient=False)
    out = ours.sparse.matmul(x, y)
    (out * ours.to_tensor(g)).sum().backward()
    np.testing.assert_allclose(out.numpy(), left @ right, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), np.swapaxes(left, -1, -2) @ g, rtol=1e-5, atol=1e-6)
    assert x.grad.is_sparse() and x.grad.nnz() == x.nnz()
    expected = (g @ np.swapaxes(right, -1, -2)) * (left != 0)
    np.testing.assert_allclose(x.grad.to_dense().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_mv_addmm_masked_matmul_against_dense_math():
    x, vec, mat = _leaf(ours, X, "csr"), ours.to_tensor([1.0, 2.0, 3.0, 4.0]), cotangent((4, 2))
    np.testing.assert_allclose(ours.sparse.mv(x, vec).numpy(), X @ vec.numpy(), rtol=1e-6)
    base = cotangent((3, 2), seed=2)
    out = ours.sparse.addmm(ours.to_tensor(base), x, ours.to_tensor(mat), beta=0.5, alpha=2.0)
    np.testing.assert_allclose(out.numpy(), 0.5 * base + 2.0 * X @ mat, rtol=1e-5, atol=1e-6)
    a, b = cotangent((3, 5)), cotangent((5, 4), seed=3)
    masked = ours.sparse.masked_matmul(ours.to_tensor(a), ours.to_tensor(b), x)
    np.testing.assert_allclose(masked.to_dense().numpy(), (a @ b) * (X != 0), rtol=1e-5, atol=1e-6)
    assert masked.is_sparse_csr()


def test_sparse_ops_refuse_what_they_cannot_take():
    x = ours.to_tensor(X).to_sparse_coo(2)
    with pytest.raises(ShapeError, match="same shape"):
        ours.sparse.add(x, ours.to_tensor(CUBE).to_sparse_coo(3))
    with pytest.raises(LayoutError):
        ours.sparse.add(x, ours.to_tensor(X))
    with pytest.raises(ShapeError, match="y must be a dense"):
        ours.sparse.matmul(x, x)
    with pytest.raises(ShapeError, match="one axis"):
        ours.sparse.sum(x, axis=[0, 1])
    with pytest.raises(ShapeError, match="axis -1"):
        ours.sparse.sum(ours.to_tensor(X).to_sparse_csr(), axis=0)
    with pytest.raises(ShapeError, match="cannot reshape"):
        ours.sparse.reshape(x, [5, -1])
    assert ours.sparse.is_same_shape(x, ours.to_tensor(Y)) and not ours.sparse.is_same_shape(x, ours.to_tensor(CUBE))


@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("shape", [(5, 4), (4, 7)])
def test_pca_lowrank_reconstructs_a_low_rank_matrix(center, shape):
    """Paddle runs pca_lowrank on CUDA only: the oracle is the factorisation itself. With q at least
    the rank, U diag(S) V^T gives back the (centred) matrix, U and V are orthonormal, and S is sorted."""
    rng = np.random.default_rng(5)
    low_rank = (rng.standard_normal((shape[0], 2)) @ rng.standard_normal((2, shape[1]))).astype("float64")
    low_rank[rng.random(shape) < 0.4] = 0.0
    ours.seed(7)
    u, s, v = ours.sparse.pca_lowrank(ours.to_tensor(low_rank).to_sparse_coo(2), center=center)
    q = min(6, *shape)
    assert (u.shape, s.shape, v.shape) == ([shape[0], q], [q], [shape[1], q])
    target = low_rank - low_rank.mean(axis=0, keepdims=True) if center else low_rank
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, target, atol=1e-8)
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(q), atol=1e-8)
    assert (np.diff(s.numpy()) <= 1e-12).all()
    with pytest.raises(ShapeError, match="q <= min"):
        ours.sparse.pca_lowrank(ours.to_tensor(low_rank).to_sparse_coo(2), q=9)
