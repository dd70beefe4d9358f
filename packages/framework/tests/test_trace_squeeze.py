"""squeeze/unsqueeze are ops of their own (and unbind squeezes), so traced programs keep the other
dims symbolic."""

import numpy as np

import paddlectl.framework as paddle


class Head(paddle.nn.Layer):
    def forward(self, h):
        return paddle.linalg.norm(h, axis=[1, 2]).unsqueeze(-1).squeeze(-1).unsqueeze([0, 2])


def test_squeeze_unsqueeze_trace_with_a_symbolic_batch(tmp_path):
    layer = Head()
    spec = [paddle.jit.InputSpec([None, 3, 4], "float32", "h")]
    paddle.jit.save(layer, str(tmp_path / "m"), input_spec=spec)
    loaded = paddle.jit.load(str(tmp_path / "m"))
    for batch in (1, 5):
        x = paddle.randn([batch, 3, 4])
        np.testing.assert_allclose(loaded(x).numpy(), layer(x).numpy(), rtol=1e-6)
        assert loaded(x).shape == [1, batch, 1]


def test_unsqueeze_inserts_one_axis_after_another_and_gradients_flow(gradcheck):
    assert paddle.unsqueeze(paddle.zeros([2, 3]), [1, 3]).shape == [2, 1, 3, 1]
    assert paddle.zeros([1, 3, 1]).squeeze(axis=[0, 1]).shape == [3, 1]
    gradcheck(lambda t: paddle.unsqueeze(t, [0, -1]).squeeze(0) * 2, np.random.default_rng(0).standard_normal((2, 3)))


def test_unbind_traces_with_a_symbolic_batch(tmp_path):
    """Each part drops the axis with a squeeze; a reshape to the example shape froze the batch."""
    fn = paddle.jit.to_static(lambda x: sum(paddle.unbind(x, axis=1)), input_spec=[paddle.jit.InputSpec([None, 3, 4])])
    for batch in (1, 5):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 4)).astype("float32")
        np.testing.assert_allclose(fn(x).numpy(), x.sum(axis=1), rtol=1e-6)
