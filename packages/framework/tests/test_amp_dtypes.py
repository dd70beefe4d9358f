"""float16/bfloat16 tensors: casts, 16-bit kernels computed in float32 and rounded, autograd, save/load."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import paddlectl.framework as paddle

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cast_rounds_as_real_paddle(real_paddle, dtype):
    values = (RNG.standard_normal(64) * 100).astype("float32")
    ours = paddle.to_tensor(values).astype(dtype)
    theirs = real_paddle.to_tensor(values).astype(dtype)
    assert ours.dtype == getattr(paddle, dtype) and ours.dtype.name == dtype
    np.testing.assert_array_equal(ours.astype("float32").numpy(), theirs.astype("float32").numpy())


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_16_bit_matmul_is_the_float32_product_rounded(dtype):
    a = RNG.standard_normal((5, 7)).astype(dtype)
    b = RNG.standard_normal((7, 3)).astype(dtype)
    got = paddle.matmul(paddle.to_tensor(a), paddle.to_tensor(b))
    assert got.dtype == np.dtype(dtype)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(got.numpy(), want)


def test_bfloat16_autograd_keeps_the_dtype_through_multi_output_ops():
    x = paddle.to_tensor(RNG.standard_normal((4, 6)).astype("float32")).astype("bfloat16")
    x.stop_gradient = False
    first, _ = paddle.split(x, 2, axis=1)  # the unused output's gradient is filled with zeros
    (paddle.tanh(first) * 2.0).sum().backward()
    assert x.grad.dtype == paddle.bfloat16
    xf = x.astype("float32").numpy()
    want = np.concatenate([2 * (1 - np.tanh(xf[:, :3]) ** 2), np.zeros((4, 3))], axis=1)
    np.testing.assert_allclose(x.grad.astype("float32").numpy(), want, rtol=2e-2, atol=1e-2)


def test_promotion_with_float32_and_python_scalars():
    h = paddle.ones([3], dtype="bfloat16")
    assert (h * 2.0).dtype == paddle.bfloat16  # a Python scalar takes the tensor's dtype
    assert (h + paddle.ones([3])).dtype == paddle.float32  # a float32 tensor promotes
    assert paddle.cast(h, "float16").dtype == paddle.float16
    assert h.sum(dtype="float32").dtype == paddle.float32


def test_bfloat16_and_float16_checkpoints_round_trip(tmp_path):
    x = paddle.to_tensor([1.5, -2.25, 3.0e5]).astype("bfloat16")
    state = {"x": x, "h": x.astype("float16"), "raw": x.numpy()}
    paddle.save(state, str(tmp_path / "s.pdparams"))
    back = paddle.load(str(tmp_path / "s.pdparams"))
    assert back["x"].dtype == paddle.bfloat16 and back["raw"].dtype == paddle.bfloat16
    assert back["h"].dtype == paddle.float16
    np.testing.assert_array_equal(back["x"].numpy().view(np.uint16), x.numpy().view(np.uint16))
    assert "bfloat16" in repr(back["x"])


def test_layer_to_bfloat16_and_back():
    layer = paddle.nn.Linear(3, 2)
    before = layer.weight.numpy()
    layer.to(dtype="bfloat16")
    assert {p.dtype for p in layer.parameters()} == {paddle.bfloat16}
    assert layer(paddle.ones([1, 3], dtype="bfloat16")).dtype == paddle.bfloat16
    layer.to(dtype="float32")
    np.testing.assert_allclose(layer.weight.numpy(), before, rtol=2**-8)


def test_bfloat16_finfo_and_predicates_match_real_paddle(real_paddle):
    ours, theirs = paddle.finfo(paddle.bfloat16), real_paddle.finfo(real_paddle.bfloat16)
    for field in ("bits", "eps", "min", "max", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == pytest.approx(getattr(theirs, field), rel=1e-6), field
    assert paddle.is_floating_point(paddle.ones([2], dtype="bfloat16"))
