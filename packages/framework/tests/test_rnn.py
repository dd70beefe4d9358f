import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ShapeError

RNG = np.random.default_rng(0)


def _copy_weights(ours, theirs):
    theirs.set_state_dict({k: v.numpy() for k, v in ours.state_dict().items()})


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
@pytest.mark.parametrize("direction, layers", [("forward", 1), ("bidirect", 2)])
@pytest.mark.parametrize("with_lengths", [False, True])
def test_recurrent_layers_match_paddle(real_paddle, kind, direction, layers, with_lengths):
    x = RNG.standard_normal((3, 5, 4)).astype("float32")
    lengths = np.array([5, 2, 4], dtype="int64") if with_lengths else None
    ours = getattr(paddle.nn, kind)(4, 6, num_layers=layers, direction=direction)
    theirs = getattr(real_paddle.nn, kind)(4, 6, num_layers=layers, direction=direction)
    _copy_weights(ours, theirs)
    xo = paddle.to_tensor(x, stop_gradient=False)
    xt = real_paddle.to_tensor(x, stop_gradient=False)
    out_o, state_o = ours(xo, sequence_length=None if lengths is None else paddle.to_tensor(lengths))
    out_t, state_t = theirs(xt, sequence_length=None if lengths is None else real_paddle.to_tensor(lengths))
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-5, atol=1e-6)
    states_o = state_o if isinstance(state_o, tuple) else (state_o,)
    states_t = state_t if isinstance(state_t, tuple) else (state_t,)
    for so, st in zip(states_o, states_t, strict=True):
        np.testing.assert_allclose(so.numpy(), st.numpy(), rtol=1e-5, atol=1e-6)
    weights = RNG.standard_normal(out_o.shape).astype("float32")
    loss_o = (out_o * paddle.to_tensor(weights)).sum() + sum(s.sum() for s in states_o)
    loss_t = (out_t * real_paddle.to_tensor(weights)).sum() + sum(s.sum() for s in states_t)
    loss_o.backward()
    loss_t.backward()
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    grads_t = {n: p.grad.numpy() for n, p in theirs.named_parameters() if p.grad is not None}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads_t[name], rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("reverse, hidden_bias", [(True, True), (False, False)])
def test_rnn_layer_gradients_match_finite_differences(gradcheck, cell, reverse, hidden_bias):
    from paddlectl.framework.ops.rnn import GATES, rnn_layer

    g, H = GATES[cell], 3
    mask = paddle.to_tensor(np.array([[1, 1, 1], [1, 1, 0]], dtype="float64"))

    def fn(x, w_ih, w_hh, b, h0):
        c0 = h0 * 0.5 if cell == "lstm" else None
        b_hh = b * 2 if hidden_bias else None
        out = rnn_layer(x, w_ih, w_hh, b, b_hh, h0, c0, mask, cell=cell, reverse=reverse)
        return out[0].sum(axis=2) + sum(s.sum(axis=1, keepdim=True) for s in out[1:])

    gradcheck(
        fn,
        RNG.standard_normal((2, 3, 2)),
        RNG.standard_normal((g * H, 2)),
        RNG.standard_normal((g * H, H)),
        RNG.standard_normal(g * H),
        RNG.standard_normal((2, H)),
    )


@pytest.mark.parametrize("kind, kwargs", [("SimpleRNN", {"activation": "relu"}), ("GRU", {})])
def test_initial_state_and_relu_match_paddle(real_paddle, kind, kwargs):
    # (no biasless case: real paddle 3.3.1 segfaults on bias_hh_attr=False; gradcheck covers it)
    x = RNG.standard_normal((3, 6, 4)).astype("float32")
    h0 = RNG.standard_normal((1, 3, 5)).astype("float32")
    ours, theirs = getattr(paddle.nn, kind)(4, 5, **kwargs), getattr(real_paddle.nn, kind)(4, 5, **kwargs)
    _copy_weights(ours, theirs)
    xo, ho = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(h0, stop_gradient=False)
    xt, ht = real_paddle.to_tensor(x, stop_gradient=False), real_paddle.to_tensor(h0, stop_gradient=False)
    out_o, last_o = ours(xo, ho)
    out_t, last_t = theirs(xt, ht)
    np.testing.assert_allclose(out_o.numpy(), out_t.numpy(), rtol=1e-5, atol=1e-6)
    (out_o.sum() + last_o.sum()).backward()
    (out_t.sum() + last_t.sum()).backward()
    for a, b in ((xo, xt), (ho, ht)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "SimpleRNNCell"])
def test_cells_match_paddle(real_paddle, kind):
    x = RNG.standard_normal((2, 4)).astype("float32")
    ours, theirs = getattr(paddle.nn, kind)(4, 5), getattr(real_paddle.nn, kind)(4, 5)
    _copy_weights(ours, theirs)
    h_o, _ = ours(paddle.to_tensor(x))
    h_t, _ = theirs(real_paddle.to_tensor(x))
    np.testing.assert_allclose(h_o.numpy(), h_t.numpy(), rtol=1e-5, atol=1e-6)


def test_time_major_and_bad_input():
    lstm = paddle.nn.LSTM(4, 3, time_major=True)
    out, (h, c) = lstm(paddle.randn([7, 2, 4]))
    assert out.shape == [7, 2, 3] and h.shape == [1, 2, 3]
    with pytest.raises(ShapeError, match="expected input"):
        lstm(paddle.randn([7, 2, 5]))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "LSTMCell"])
def test_recurrent_models_export_with_a_symbolic_batch(tmp_path, kind):
    """Without initial states the op starts from zeros itself, so the traced program holds no
    batch-sized constant (it did, and a symbolic batch was refused) and one export serves every batch."""
    from paddlectl.framework import inference, jit
    from paddlectl.framework.jit import InputSpec

    class Model(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            cell = kind == "LSTMCell"
            self.rnn = paddle.nn.LSTMCell(4, 5) if cell else getattr(paddle.nn, kind)(4, 5, direction="bidirect")

        def forward(self, x):
            out, state = self.rnn(x)
            last = state[1] if isinstance(state, tuple) else state
            return out, last

    paddle.seed(0)
    layer = Model()
    layer.eval()
    spec = [None, 4] if kind == "LSTMCell" else [None, 7, 4]
    path = str(tmp_path / "rnn")
    jit.save(layer, path, input_spec=[InputSpec(spec, "float32", "x")])
    predictor = inference.create_predictor(inference.Config(path))
    for batch in (1, 5):
        x = RNG.standard_normal([batch, *spec[1:]]).astype("float32")
        with paddle.no_grad():
            expected = [t.numpy() for t in layer(paddle.to_tensor(x))]
        for got, want in zip(predictor.run([x]), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_recurrent_layer_exports_with_a_symbolic_length(tmp_path):
    """The reserve's shape rule added 1 to the time dim as an int, so a symbolic length (speech:
    any number of frames) failed to trace; one export now serves every length."""
    from paddlectl.framework import inference, jit
    from paddlectl.framework.jit import InputSpec

    paddle.seed(0)
    layer = paddle.nn.GRU(4, 5, direction="bidirect")
    layer.eval()
    path = str(tmp_path / "gru")
    jit.save(layer, path, input_spec=[InputSpec([None, None, 4], "float32", "x")])
    predictor = inference.create_predictor(inference.Config(path))
    for steps in (3, 8):
        x = RNG.standard_normal([2, steps, 4]).astype("float32")
        with paddle.no_grad():
            expected = [t.numpy() for t in layer(paddle.to_tensor(x))]
        for got, want in zip(predictor.run([x]), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("reverse", [False, True])
def test_float32_whole_sequence_kernels_match_the_float64_step_loop(cell, reverse):
    """float32 runs each time loop in one kernel (``kernels.rnn.forward_sequence`` /
    ``backward_sequence``, products on the packed-weight micro-kernel); float64 steps in Python with
    NumPy's products. Both give the same outputs, states and every gradient, masks and dh0 included."""
    from paddlectl.framework.ops import rnn as ops

    B, T, F, H = 3, 5, 4, 6
    G = {"lstm": 4, "gru": 3}.get(cell, 1) * H
    data = [RNG.standard_normal(s) * 0.5 for s in ((B, T, F), (G, F), (G, H), (G,), (G,), (B, H), (B, H))]
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], np.float64)
    results = {}
    for dtype in (np.float64, np.float32):
        x, w_ih, w_hh, b_ih, b_hh, h0, c0 = (a.astype(dtype) for a in data)
        out = ops._rnn_forward(None, x, w_ih, w_hh, b_ih, b_hh, h0, c0 if cell == "lstm" else None, mask, cell, reverse)
        ys, reserve = out[0], out[-1]
        dys = np.cos(np.arange(ys.size)).reshape(ys.shape).astype(dtype)
        dh = np.sin(np.arange(B * H)).reshape(B, H).astype(dtype)
        dc = dh[::-1].copy() if cell == "lstm" else None
        grads = ops._rnn_grad_forward(None, x, w_ih, w_hh, mask, reserve, dys, dh, dc, cell, reverse, [True] * 7)
        results[dtype] = [*out[:-1], *(g for g in grads if g.size)]
    for ours, want in zip(results[np.float32], results[np.float64], strict=True):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn_tanh"])
def test_float32_sequences_give_the_same_bits_on_any_row_split(cell, monkeypatch):
    """The float32 sequence kernels run the batch in row blocks side by side (one per thread): each
    row's recurrence is its own, so 1, 2 or 3 blocks (a last, shorter one) give identical outputs,
    states and gradients, and a run does not depend on the thread count or the load."""
    from paddlectl.framework.ops import rnn as ops

    B, T, F, H = 7, 5, 4, 6
    G = {"lstm": 4, "gru": 3}.get(cell, 1) * H
    x, w_ih, w_hh, b_ih, b_hh, h0, c0 = (
        (RNG.standard_normal(s) * 0.5).astype(np.float32)
        for s in ((B, T, F), (G, F), (G, H), (G,), (G,), (B, H), (B, H))
    )
    mask = (np.arange(T) < np.array([5, 4, 5, 1, 3, 5, 2])[:, None]).astype(np.float32)
    results = []
    for blocks in (1, 2, 3):
        monkeypatch.setattr(ops, "_row_blocks", lambda *shape, blocks=blocks: blocks)
        out = ops._rnn_forward(None, x, w_ih, w_hh, b_ih, b_hh, h0, c0 if cell == "lstm" else None, mask, cell)
        ys, reserve = out[0], out[-1]
        dys = np.cos(np.arange(ys.size)).reshape(ys.shape).astype(np.float32)
        dh = np.sin(np.arange(B * H)).reshape(B, H).astype(np.float32)
        dc = dh[::-1].copy() if cell == "lstm" else None
        grads = ops._rnn_grad_forward(None, x, w_ih, w_hh, mask, reserve, dys, dh, dc, cell, False, [True] * 7)
        results.append([*out, *(g for g in grads if g.size)])
    for split in results[1:]:
        for got, want in zip(split, results[0], strict=True):
            np.testing.assert_array_equal(got, want)
