"""Running one sparse program on paddlectl and on real Paddle, and comparing what comes out."""

from __future__ import annotations

import numpy as np

import paddlectl.framework as ours


def assert_same(mine, theirs, rtol=1e-5, atol=1e-6):
    """Same layout, shape and pattern, and close values (dense tensors: close arrays)."""
    assert list(mine.shape) == list(theirs.shape)
    assert mine.is_sparse() == theirs.is_sparse()
    if theirs.is_sparse_coo():
        assert mine.is_sparse_coo()
        np.testing.assert_array_equal(mine.indices().numpy(), theirs.indices().numpy().reshape(mine.indices().shape))
    elif theirs.is_sparse_csr():
        assert mine.is_sparse_csr()
        np.testing.assert_array_equal(mine.crows().numpy(), theirs.crows().numpy())
        np.testing.assert_array_equal(mine.cols().numpy(), theirs.cols().numpy())
    mine_v = mine.values() if theirs.is_sparse() else mine
    theirs_v = theirs.values() if theirs.is_sparse() else theirs
    assert mine_v.dtype.name == str(theirs_v.dtype).removeprefix("paddle.")
    np.testing.assert_allclose(mine_v.numpy(), theirs_v.numpy(), rtol=rtol, atol=atol)


def assert_same_gradient(mine, theirs, rtol=1e-5, atol=1e-6):
    """Gradients compared as dense arrays: Paddle's sparse gradient patterns differ from op to op (a
    slice's holds only the sliced entries), ours is always the input's pattern; the numbers agree."""
    densify = lambda g: g.to_dense() if g.is_sparse() else g  # noqa: E731
    np.testing.assert_allclose(densify(mine).numpy(), densify(theirs).numpy(), rtol=rtol, atol=atol)


def both(real_paddle, program):
    """``program(paddle)`` on each side."""
    return program(ours), program(real_paddle)


def cotangent(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def backward_weighted(p, out, seed=0) -> None:
    """Backward from ``sum(out * w)`` for a fixed random ``w``: a sparse ``out`` is seeded with a
    tensor of its own pattern (Paddle has no gradient for a CSR tensor's ``values()``/``to_dense()``)."""
    values = out.values() if out.is_sparse() else out
    if not str(values.dtype).removeprefix("paddle.").startswith("float"):
        return
    weights = p.to_tensor(cotangent(values.shape, seed)).astype(values.dtype)
    if not out.is_sparse():
        (out * weights).sum().backward()
    elif values.ndim == 0:
        out.backward()
    elif out.is_sparse_coo():
        out.backward(p.sparse.sparse_coo_tensor(out.indices(), weights, out.shape))
    else:
        out.backward(p.sparse.sparse_csr_tensor(out.crows(), out.cols(), weights, out.shape))
