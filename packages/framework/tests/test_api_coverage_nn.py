"""nn additions of issue 30 against real Paddle 3.3.1: alpha/1-D/3-D dropout (Paddle's draws, so
the same seed drops the same units), local response normalisation, the Orthogonal initialiser."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, ShapeError

RNG = np.random.default_rng(30)


@pytest.mark.parametrize(("name", "shape"), [("alpha_dropout", (4, 6)), ("feature_alpha_dropout", (3, 4, 5))])
def test_alpha_dropout_matches_paddle_under_one_seed(real_paddle, name, shape):
    x = RNG.standard_normal(shape).astype(np.float32)

    def build(P):
        def fn(t):
            P.seed(2023)
            return getattr(P.nn.functional, name)(t, p=0.3)

        return fn

    compare(real_paddle, build, x)
    assert getattr(ours.nn.functional, name)(ours.to_tensor(x), p=0.3, training=False).numpy().tolist() == x.tolist()


def test_alpha_dropout_keeps_zero_mean_unit_variance():
    ours.seed(1)
    x = ours.randn([200000])
    y = ours.nn.AlphaDropout(p=0.4)(x).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01


@pytest.mark.parametrize(
    ("name", "shape", "channel_axes"), [("dropout1d", (4, 5, 6), (0, 1)), ("dropout3d", (2, 5, 2, 3, 2), (0, 1))]
)
def test_channel_dropout_drops_whole_channels(name, shape, channel_axes):
    ours.seed(3)
    y = getattr(ours.nn.functional, name)(ours.ones(list(shape)), p=0.5).numpy()
    per_channel = y.reshape(*[shape[a] for a in channel_axes], -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert 0 < (per_channel == 0).all(-1).sum() < per_channel[..., 0].size


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [((2, 7, 3, 4), {"size": 5}), ((2, 3, 4, 6), {"size": 3, "alpha": 0.1, "beta": 0.5, "k": 2.0, "data_format": "NHWC"}),
     ((2, 6, 5), {"size": 2, "data_format": "NCL"}), ((1, 4, 2, 3, 2), {"size": 3, "data_format": "NCDHW"})],
)  # fmt: skip
def test_local_response_norm_matches_paddle(real_paddle, shape, kwargs):
    compare(
        real_paddle, lambda P: lambda t: P.nn.functional.local_response_norm(t, **kwargs), RNG.standard_normal(shape)
    )
    layer = ours.nn.LocalResponseNorm(**kwargs)
    assert layer(ours.to_tensor(RNG.standard_normal(shape))).shape == list(shape)


@pytest.mark.parametrize("shape", [[6, 4], [3, 8], [4, 2, 3]])
def test_orthogonal_initializer_matches_paddle(real_paddle, shape):
    def draw(P):
        P.seed(11)
        return P.create_parameter(shape, "float32", default_initializer=P.nn.initializer.Orthogonal(gain=2.0)).numpy()

    got, want = draw(ours), draw(real_paddle)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    flat = got.reshape(shape[0], -1)
    small = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(small, 4 * np.eye(len(small)), atol=1e-5)


def test_bad_inputs_name_the_fix():
    with pytest.raises(ShapeError, match="at least 2 dims"):
        ours.create_parameter([3], "float32", default_initializer=ours.nn.initializer.Orthogonal())
    with pytest.raises(ShapeError, match="5-D"):
        ours.nn.functional.dropout3d(ours.ones([2, 3, 4]))
    with pytest.raises(ShapeError, match="size"):
        ours.nn.functional.local_response_norm(ours.ones([2, 3, 4]), 0)


def test_parameter_dict_registers_its_parameters_as_paddle(real_paddle):
    def build(P):
        d = P.nn.ParameterDict({"a": P.create_parameter([2, 2], "float32")})
        d["b"] = P.create_parameter([3], "float32")
        d.update([("a", P.create_parameter([1], "float32"))])
        return d

    mine, theirs = build(ours), build(real_paddle)
    assert list(mine) == list(theirs) == ["a", "b"] and len(mine) == 2
    assert {k: v.shape for k, v in mine.state_dict().items()} == {
        k: list(v.shape) for k, v in theirs.state_dict().items()
    }
    assert len(mine.parameters()) == 2
    with pytest.raises(ConfigError, match="pairs"):
        mine.update([1])


@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (lambda P, x: P.nn.functional.maxout(x, 2), [(2, 6, 3, 4)]),
        (lambda P, x: P.nn.functional.maxout(x, 3, axis=-1), [(2, 3, 4, 6)]),
        (lambda P, x: P.nn.functional.channel_shuffle(x, 3), [(2, 6, 3, 4)]),
        (lambda P, x: P.nn.functional.channel_shuffle(x, 2, "NHWC"), [(2, 3, 4, 6)]),
        (lambda P, x: P.nn.functional.swiglu(x), [(3, 8)]),
        (lambda P, x, y: P.nn.functional.swiglu(x, y), [(3, 4), (3, 4)]),
    ],
)
def test_channel_mixing_matches_paddle(real_paddle, fn, shapes):
    compare(real_paddle, lambda P: lambda *t: fn(P, *t), *[RNG.standard_normal(s) for s in shapes])


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "kwargs"),
    [
        ((2, 4, 7), (4, 3, 3), {}),
        ((2, 4, 7), (4, 1, 3), {"stride": 2, "padding": [1, 0], "output_padding": 1, "groups": 2, "dilation": 1}),
        ((2, 7, 4), (4, 3, 2), {"stride": 3, "padding": 1, "data_format": "NLC"}),
        ((1, 2, 5), (2, 2, 3), {"stride": 2, "output_size": 12}),
    ],
)
def test_conv1d_transpose_matches_paddle(real_paddle, x_shape, w_shape, kwargs):
    build = lambda P: lambda x, w, b: P.nn.functional.conv1d_transpose(x, w, b, **kwargs)  # noqa: E731
    bias = RNG.standard_normal(w_shape[1] * kwargs.get("groups", 1))
    compare(real_paddle, build, RNG.standard_normal(x_shape), RNG.standard_normal(w_shape), bias)


def test_conv1d_transpose_layer_holds_paddles_parameters(real_paddle):
    mine, theirs = ours.nn.Conv1DTranspose(4, 6, 3, stride=2), real_paddle.nn.Conv1DTranspose(4, 6, 3, stride=2)
    assert {k: v.shape for k, v in mine.state_dict().items()} == {
        k: list(v.shape) for k, v in theirs.state_dict().items()
    }
    mine.set_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(
        mine(ours.to_tensor(x)).numpy(), theirs(real_paddle.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6
    )
