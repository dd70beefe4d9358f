"""COO/CSR tensors against real Paddle: creation, conversions, accessors, printing, and the typed
refusals (a sparse tensor in a dense op, a bad pattern)."""

from __future__ import annotations

import numpy as np
import pytest
from _sparse_parity import assert_same, both

import paddlectl.framework as ours
from paddlectl.framework.errors import LayoutError, ShapeError

DENSE = np.array([[0, -1, 0, 2], [0, 0, 0, 0], [4, 5, 0, 0.5]], dtype="float32")
BATCHED = np.array([[[0, 1.0], [2, 0]], [[0, 0], [0, 3]]], dtype="float32")


@pytest.mark.parametrize(
    "program",
    [
        lambda p: p.sparse.sparse_coo_tensor([[0, 1, 2], [1, 2, 0]], [1.0, 2.0, 3.0], [3, 3]),
        lambda p: p.sparse.sparse_coo_tensor([[0, 0, 1], [1, 1, 2]], [1.0, 2.0, 3.0]),  # shape inferred
        lambda p: p.sparse.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], [3, 2]),  # a dense dim
        lambda p: p.sparse.sparse_csr_tensor([0, 2, 3, 5], [1, 3, 2, 0, 1], [1, 2, 3, 4, 5], [3, 4]),
        lambda p: p.to_tensor(DENSE).to_sparse_coo(2),
        lambda p: p.to_tensor(DENSE).to_sparse_coo(1),
        lambda p: p.to_tensor(DENSE).to_sparse_csr(),
        lambda p: p.to_tensor(BATCHED).to_sparse_csr(),
        lambda p: p.to_tensor(BATCHED).to_sparse_coo(3).to_sparse_csr(),
        lambda p: p.to_tensor(BATCHED).to_sparse_csr().to_sparse_coo(3),
        lambda p: p.to_tensor(DENSE).to_sparse_csr().to_dense(),
        lambda p: p.to_tensor(DENSE).to_sparse_coo(1).to_dense(),
        lambda p: p.sparse.sparse_coo_tensor([[0, 0, 1], [1, 1, 2]], [1.0, 2.0, 3.0]).to_dense(),  # duplicates add
        lambda p: p.sparse.coalesce(p.sparse.sparse_coo_tensor([[1, 0, 1], [2, 1, 2]], [1.0, 2.0, 3.0])),
    ],
)
def test_creation_and_conversion_match_paddle(real_paddle, program):
    assert_same(*both(real_paddle, program))


def test_accessors_and_printing_match_paddle(real_paddle):
    mine, theirs = both(real_paddle, lambda p: p.to_tensor(BATCHED[0]).to_sparse_coo(2))
    assert (mine.nnz(), mine.sparse_dim(), mine.dense_dim()) == (theirs.nnz(), theirs.sparse_dim(), theirs.dense_dim())
    assert mine.is_sparse() and mine.is_sparse_coo() and not mine.is_sparse_csr() and not mine.is_dense()
    assert isinstance(mine, ours.Tensor) and mine.dtype == ours.float32 and mine.indices().dtype == ours.int64
    assert str(mine).replace("dtype=", "dtype=paddle.") == str(
        theirs
    )  # whole numbers: NumPy's and Paddle's digits agree
    csr, csr_theirs = both(real_paddle, lambda p: p.to_tensor(BATCHED).to_sparse_csr())
    assert str(csr).replace("dtype=", "dtype=paddle.") == str(csr_theirs)
    assert csr.nnz() == csr_theirs.nnz() and csr.is_sparse_csr()
    dense = ours.to_tensor(DENSE)
    assert not dense.is_sparse() and dense.to_dense() is dense


@pytest.mark.parametrize("through", ["to_dense", "sin"])
def test_gradient_reaches_the_sparse_leaf(real_paddle, through):
    weights = np.arange(12, dtype="float32").reshape(3, 4)

    def program(p):
        x = p.sparse.sparse_coo_tensor([[0, 2, 1], [1, 0, 2]], [1.0, 2.0, 3.0], [3, 4])
        x.stop_gradient = False  # a leaf (Paddle's stop_gradient=False argument makes an inner node instead)
        if through == "to_dense":  # (Paddle has no gradient for a CSR tensor's to_dense)
            (x.to_dense() * p.to_tensor(weights)).sum().backward()
        else:
            p.sparse.sin(x).backward()
        return x.grad

    assert_same(*both(real_paddle, program))


def test_dense_ops_refuse_sparse_tensors():
    x = ours.to_tensor(DENSE).to_sparse_coo(2)
    for dense_op in (lambda: ours.sin(x), lambda: x + 1, lambda: ours.matmul(x, x), lambda: x.numpy()):
        with pytest.raises(LayoutError, match="to_dense"):
            dense_op()
    with pytest.raises(LayoutError, match="to_sparse_coo"):
        ours.sparse.sin(ours.to_tensor(DENSE))


@pytest.mark.parametrize(
    "bad",
    [
        lambda: ours.sparse.sparse_coo_tensor([[0, 3]], [1.0, 2.0], [3]),  # out of bounds
        lambda: ours.sparse.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0], [3]),  # nnz mismatch
        lambda: ours.sparse.sparse_coo_tensor([[0.5, 1]], [1.0, 2.0], [3]),  # float indices
        lambda: ours.sparse.sparse_csr_tensor([0, 2, 1, 3], [0, 1, 2], [1.0, 2.0, 3.0], [3, 3]),  # crows decrease
        lambda: ours.sparse.sparse_csr_tensor([0, 1, 2], [0, 5], [1.0, 2.0], [2, 3]),  # column out of bounds
        lambda: ours.to_tensor(DENSE).to_sparse_coo(3),
        lambda: ours.to_tensor(np.zeros(4, "float32")).to_sparse_csr(),
    ],
)
def test_bad_patterns_raise_shape_errors(bad):
    with pytest.raises(ShapeError):
        bad()


def test_layout_questions_match_paddle(real_paddle):
    def program(p):
        coo = p.sparse.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], np.ones((3, 2), "float32"), [2, 3, 2])
        csr = p.to_tensor(DENSE).to_sparse_csr()
        dense = p.to_tensor(DENSE)
        return [
            coo.sparse_dim(), coo.dense_dim(), csr.sparse_dim(), csr.dense_dim(), dense.sparse_dim(),
            dense.dense_dim(), coo.is_coalesced(), coo.coalesce().is_coalesced(),
            dense.to_sparse_coo(1).is_coalesced(), dense.is_same_shape(csr), coo.is_same_shape(dense),
        ]  # fmt: skip

    mine, theirs = both(real_paddle, program)
    assert mine == theirs


def test_a_tensor_with_nothing_stored_goes_through_every_kind_of_op():
    empty = ours.zeros([2, 3]).to_sparse_coo(2)
    assert empty.nnz() == 0 and empty.indices().shape == [2, 0]
    np.testing.assert_array_equal(empty.to_dense().numpy(), np.zeros((2, 3)))
    assert ours.zeros([2, 3]).to_sparse_csr().crows().tolist() == [0, 0, 0]
    assert ours.sparse.add(empty, empty).nnz() == 0 and ours.sparse.nn.functional.softmax(empty).nnz() == 0
    assert ours.sparse.sum(empty).values().item() == 0
    volume = ours.zeros([1, 4, 4, 4, 2]).to_sparse_coo(4)
    assert ours.sparse.nn.functional.max_pool3d(volume, 2).shape == [1, 2, 2, 2, 2]
    assert ours.sparse.nn.functional.conv3d(volume, ours.ones([2, 2, 2, 2, 3])).nnz() == 0
