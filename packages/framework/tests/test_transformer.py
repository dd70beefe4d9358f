import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(0)


def _pair(real_paddle, build):
    ours, theirs = build(paddle), build(real_paddle)
    theirs.set_state_dict({k: v.numpy() for k, v in ours.state_dict().items()})
    ours.eval()
    theirs.eval()
    return ours, theirs


@pytest.mark.parametrize("normalize_before", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_matches_paddle_outputs_and_grads(real_paddle, normalize_before, activation):
    def build(p):
        layer = p.nn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0, activation=activation, normalize_before=normalize_before
        )
        return p.nn.TransformerEncoder(layer, 2)

    ours, theirs = _pair(real_paddle, build)
    x = RNG.standard_normal((2, 5, 16)).astype("float32")
    mask = np.tril(np.ones((5, 5), dtype=bool))[None, None]
    xo, xt = paddle.to_tensor(x, stop_gradient=False), real_paddle.to_tensor(x, stop_gradient=False)
    out_o = ours(xo, paddle.to_tensor(mask))
    out_t = theirs(xt, real_paddle.to_tensor(mask))
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-4, atol=1e-5)
    w = RNG.standard_normal(out_o.shape).astype("float32")
    (out_o * paddle.to_tensor(w)).sum().backward()
    (out_t * real_paddle.to_tensor(w)).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-3, atol=1e-5)
    theirs_grads = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), theirs_grads[name], rtol=1e-3, atol=1e-5, err_msg=name)


def test_attention_with_float_mask_and_weights(real_paddle):
    ours, theirs = _pair(real_paddle, lambda p: p.nn.MultiHeadAttention(8, 2, need_weights=True))
    q, k = RNG.standard_normal((2, 3, 8)).astype("float32"), RNG.standard_normal((2, 4, 8)).astype("float32")
    mask = RNG.standard_normal((2, 2, 3, 4)).astype("float32")
    out_o, w_o = ours(paddle.to_tensor(q), paddle.to_tensor(k), paddle.to_tensor(k), paddle.to_tensor(mask))
    out_t, w_t = theirs(
        real_paddle.to_tensor(q), real_paddle.to_tensor(k), real_paddle.to_tensor(k), real_paddle.to_tensor(mask)
    )
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(w_o.numpy(), w_t.numpy(), rtol=1e-4, atol=1e-6)


def test_bad_shapes():
    with pytest.raises(ValueError, match="divisible"):
        paddle.nn.MultiHeadAttention(10, 3)
    with pytest.raises(ShapeError, match="query must be"):
        paddle.nn.MultiHeadAttention(8, 2)(paddle.randn([2, 3, 6]))
