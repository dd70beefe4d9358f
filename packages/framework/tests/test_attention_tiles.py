"""The inference ``attention`` op on register tiles (``kernels.attention``): equal to a float64
reference and to the stacked NumPy products it replaces, on the shapes it takes (several images,
odd lengths, a key-row mask, q/k/v as column views of one projection) and on those it leaves to
the products (a mask per query, head sizes that are not whole panels)."""

import numpy as np
import pytest

from paddlectl.framework.kernels import attention as kernel
from paddlectl.framework.ops import attention as op

RNG = np.random.default_rng(0)


def _reference(q, k, v, mask, heads, scale):
    n, lq, width = q.shape
    d, dv = width // heads, v.shape[2] // heads
    split = lambda a, e: a.astype(np.float64).reshape(n, a.shape[1], heads, e).transpose(0, 2, 1, 3)  # noqa: E731
    scores = scale * split(q, d) @ split(k, d).transpose(0, 1, 3, 2)
    if mask is not None:
        scores = scores + mask
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    return (scores @ split(v, dv)).transpose(0, 2, 1, 3).reshape(n, lq, heads * dv)


def _qkv(n, lq, lk, heads, d):
    """q, k and v as column views of one [N, L, 3*H*D] projection (what fuse_attention hands over)."""
    if lq == lk:
        qkv = RNG.standard_normal((n, lq, 3 * heads * d)).astype(np.float32)
        return qkv[..., : heads * d], qkv[..., heads * d : 2 * heads * d], qkv[..., 2 * heads * d :]
    q = RNG.standard_normal((n, lq, heads * d)).astype(np.float32)
    kv = RNG.standard_normal((n, lk, 2 * heads * d)).astype(np.float32)
    return q, kv[..., : heads * d], kv[..., heads * d :]


W = kernel.WIDTH


@pytest.mark.parametrize(
    "n, lq, lk, heads, d, mask_shape",
    [
        (1, 128, 128, 12, 2 * W, (1, 1, 1, 128)),
        (2, 7, 13, 3, W, (2, 1, 1, 13)),
        (3, 5, 40, 2, 2 * W, None),
        (1, 1, 1, 1, W, (1, 1)),
        (2, 9, 9, 2, W, (1,)),
    ],
)
def test_tiles_equal_the_reference_and_the_stacked_products(n, lq, lk, heads, d, mask_shape):
    q, k, v = _qkv(n, lq, lk, heads, d)
    mask = None if mask_shape is None else np.where(RNG.random(mask_shape) < 0.3, -1e4, 0.0).astype(np.float32)
    scale = 0.3
    assert op._tiled(q, k, v, mask, heads, scale) is not None  # these shapes take the tiles
    got = op._attention(q, k, v, mask, heads, scale)
    want = _reference(q, k, v, mask, heads, scale)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_the_parallel_and_serial_kernels_agree():
    q, k, v = _qkv(3, 9, 9, 2, W)
    rows = np.where(RNG.random((3, 9)) < 0.3, -1e4, 0.0).astype(np.float32)
    outs = [np.empty((27, 2 * W), np.float32) for _ in range(2)]
    kernel.attention.serial(q, k, v, rows, np.float32(0.4), 2, outs[0])
    kernel.attention.parallel(q, k, v, rows, np.float32(0.4), 2, outs[1])
    np.testing.assert_array_equal(outs[0], outs[1])  # the same per-task arithmetic
    np.testing.assert_allclose(outs[0].reshape(3, 9, -1), _reference(q, k, v, rows[:, None, None], 2, 0.4),
                               rtol=2e-5, atol=2e-6)  # fmt: skip


def test_a_mask_per_query_or_a_head_off_the_panels_keeps_the_stacked_products():
    q, k, v = _qkv(2, 6, 6, 2, W)
    per_query = np.where(RNG.random((2, 1, 6, 6)) < 0.3, -1e4, 0.0).astype(np.float32)
    assert op._tiled(q, k, v, per_query, 2, 0.5) is None
    np.testing.assert_allclose(op._attention(q, k, v, per_query, 2, 0.5), _reference(q, k, v, per_query, 2, 0.5),
                               rtol=2e-5, atol=2e-6)  # fmt: skip
    q, k, v = _qkv(1, 4, 4, 2, W + 2)
    assert op._tiled(q, k, v, None, 2, 0.5) is None
    q64 = RNG.standard_normal((1, 4, 2 * W))
    assert op._tiled(q64, q64, q64, None, 2, 0.5) is None  # float64 stays on the products
