"""Activations and softmax: finite differences, real PaddlePaddle (values at the kinks included), layers."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare, functional, layer

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

F = paddle.nn.functional
rng = np.random.default_rng(0)


def away_from(points, *shape, gap=0.05):
    """Random values at least ``gap`` from every kink in ``points`` (finite differences break there)."""
    x = rng.uniform(-5, 7, shape)
    for p in points:
        near = np.abs(x - p) < gap
        x[near] = p + np.where(x[near] >= p, gap, -gap) * 2
    return x


# name, kwargs, kinks
ACTIVATIONS = [
    ("relu", {}, [0]),
    ("relu6", {}, [0, 6]),
    ("gelu", {}, []),
    ("gelu", {"approximate": True}, []),
    ("gelu", {"approximate": "tanh"}, []),
    ("silu", {}, []),
    ("swish", {}, []),
    ("sigmoid", {}, []),
    ("tanh", {}, []),
    ("hardswish", {}, [-3, 3]),
    ("hardsigmoid", {}, [-3, 3]),
    ("hardsigmoid", {"slope": 0.2, "offset": 0.3}, [-1.5, 3.5]),
    ("leaky_relu", {}, [0]),
    ("leaky_relu", {"negative_slope": 0.3}, [0]),
    ("elu", {}, [0]),
    ("elu", {"alpha": 0.5}, [0]),
    ("softplus", {}, []),
    ("softplus", {"beta": 2, "threshold": 5}, [2.5]),
    ("mish", {}, []),
]
IDS = [f"{n}-{k}" for n, k, _ in ACTIVATIONS]


@pytest.mark.parametrize("name, kwargs, kinks", ACTIVATIONS, ids=IDS)
def test_activation_gradient_matches_finite_differences(gradcheck, name, kwargs, kinks):
    fn = getattr(F, name)
    gradcheck(lambda x: fn(x, **kwargs), away_from(kinks, 3, 4))
    gradcheck(lambda x: fn(x, **kwargs), away_from(kinks, 1, 1, 5))


@pytest.mark.parametrize("name, kwargs, kinks", ACTIVATIONS, ids=IDS)
def test_activation_matches_paddle(real_paddle, name, kwargs, kinks):
    # float32 is computed in float32 arithmetic, as in Paddle; beyond |x| ~ 5 derivatives such as
    # 1 - tanh(x)^2 cancel, and the two implementations' roundings differ by ~2e-6 there.
    atol = 1e-6
    functional(real_paddle, name, rng.uniform(-4.5, 7, (2, 3, 4)).astype("float32"), atol=atol, **kwargs)
    # values exactly at the kinks: Paddle's one-sided derivative conventions
    special = np.array([-30, -6, -3, -2.5, -1.5, -1, 0, 1, 2.5, 3, 3.5, 6, 25], dtype="float32")
    functional(real_paddle, name, special, atol=atol, **kwargs)
    functional(real_paddle, name, np.zeros((0, 3), "float32"), **kwargs)
    functional(real_paddle, name, rng.standard_normal((4, 3)), **kwargs)  # float64


@pytest.mark.parametrize("name, kwargs, kinks", ACTIVATIONS[:6], ids=IDS[:6])
def test_activation_on_non_contiguous_input_matches_paddle(real_paddle, name, kwargs, kinks):
    x = rng.standard_normal((3, 4, 5)).astype("float32")
    compare(real_paddle, lambda mod: lambda t: getattr(mod.nn.functional, name)(t.transpose([2, 0, 1]), **kwargs), x)


def test_float16_activations_compute_in_float32():
    x = paddle.to_tensor(np.array([-1.0, 0.5, 2.0], dtype="float16"))
    for fn in (F.gelu, F.silu, F.mish, F.sigmoid, F.softmax):
        out = fn(x)
        assert out.dtype == np.float16
        expected = fn(x.astype("float32")).numpy()
        np.testing.assert_allclose(out.numpy().astype("float32"), expected, rtol=1e-3)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 1, 4), -2), ((4,), 0)])
def test_softmax_family_gradients(gradcheck, fn, shape, axis):
    gradcheck(lambda x: getattr(F, fn)(x, axis=axis), rng.standard_normal(shape))


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", [((3, 7), -1), ((2, 3, 4), 1), ((5, 2, 3), 0), ((0, 4), -1), ((2, 0), 1)])
def test_softmax_family_matches_paddle(real_paddle, fn, shape, axis):
    functional(real_paddle, fn, (rng.standard_normal(shape) * 10).astype("float32"), axis=axis)


def test_softmax_extremes_and_dtype_and_scalar(real_paddle):
    # Paddle clips x - max at -64: the floor is exp(-64) for softmax and about -64 for log_softmax
    big = np.array([[1000.0, -1000.0, 0.0, 937, 935], [-np.inf, 0.0, 1.0, 2, 3]], dtype="float32")
    functional(real_paddle, "softmax", big)
    functional(real_paddle, "log_softmax", big)
    functional(real_paddle, "log_softmax", big.astype("float64"), axis=0)
    functional(real_paddle, "softmax", rng.standard_normal((2, 3)).astype("float32"), dtype="float64")
    functional(real_paddle, "log_softmax", rng.standard_normal((2, 3)).astype("float32"), axis=0, dtype="float64")
    assert float(F.softmax(paddle.to_tensor(3.0))) == 1.0
    x = paddle.to_tensor(rng.standard_normal((2, 3)).astype("float32"))
    np.testing.assert_allclose(x.softmax(axis=0).numpy(), paddle.softmax(x, 0).numpy())
    np.testing.assert_allclose(paddle.sigmoid(x).numpy(), x.sigmoid().numpy())


def test_softmax_non_contiguous_matches_paddle(real_paddle):
    x = rng.standard_normal((3, 4, 5)).astype("float32")
    compare(real_paddle, lambda mod: lambda t: mod.nn.functional.softmax(t.transpose([2, 0, 1]), axis=1), x)
    compare(real_paddle, lambda mod: lambda t: mod.nn.functional.log_softmax(t.transpose([1, 2, 0]), axis=-1), x)


@pytest.mark.parametrize(
    "x_shape, w_shape, fmt",
    [((2, 3, 4, 4), (1,), "NCHW"), ((2, 3, 4, 4), (3,), "NCHW"), ((2, 4, 4, 3), (3,), "NHWC"), ((5, 3), (3,), "NC")],
)
def test_prelu_matches_finite_differences_and_paddle(gradcheck, real_paddle, x_shape, w_shape, fmt):
    x = away_from([0], *x_shape) / 3
    w = rng.uniform(0.1, 0.5, w_shape)
    gradcheck(lambda a, b: F.prelu(a, b, data_format=fmt), x, w)
    compare(
        real_paddle,
        lambda mod: lambda a, b: mod.nn.functional.prelu(a, b, data_format=fmt),
        x.astype("float32"),
        w.astype("float32"),
    )


LAYERS = [
    ("ReLU", (), {}),
    ("ReLU6", (), {}),
    ("GELU", (), {}),
    ("GELU", (True,), {}),
    ("Silu", (), {}),
    ("Swish", (), {}),
    ("Sigmoid", (), {}),
    ("Tanh", (), {}),
    ("Hardswish", (), {}),
    ("Hardsigmoid", (), {}),
    ("LeakyReLU", (0.2,), {}),
    ("ELU", (), {"alpha": 0.7}),
    ("Softplus", (2, 10), {}),
    ("Softmax", (), {"axis": 1}),
    ("LogSoftmax", (0,), {}),
    ("Mish", (), {}),
    ("PReLU", (3, 0.1), {}),
    ("PReLU", (), {"init": 0.3}),
]


@pytest.mark.parametrize("cls, args, kwargs", LAYERS, ids=[f"{c}{a}{k}" for c, a, k in LAYERS])
def test_activation_layers_match_paddle(real_paddle, cls, args, kwargs):
    # the gradients' roundings differ by up to ~2e-6 where derivatives cancel (see
    # test_activation_matches_paddle on |x| > 5; tanh-approximate GELU's went 1.2e-6 apart)
    x = rng.uniform(-4.5, 7, (2, 3, 4)).astype("float32")
    layer(real_paddle, cls, args, kwargs, x, atol=2e-6)


def test_activation_layer_reprs_match_paddle(real_paddle):
    for cls, args, kwargs in LAYERS:
        assert repr(getattr(paddle.nn, cls)(*args, **kwargs)) == repr(getattr(real_paddle.nn, cls)(*args, **kwargs))


def test_bad_inputs_raise_typed_errors():
    ints = paddle.to_tensor(np.array([1, 2, 3]))
    with pytest.raises(DTypeError, match="relu: expected a floating-point tensor"):
        F.relu(ints)
    with pytest.raises(DTypeError, match="softmax"):
        F.softmax(ints)
    x = paddle.randn([2, 3])
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        F.softmax(x, axis=2)
    with pytest.raises(ShapeError, match="weight has 4 slopes but the input"):
        F.prelu(x, paddle.ones([4]), data_format="NC")
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")
    with pytest.raises(TypeError, match="unexpected arguments"):
        paddle.nn.ReLU(alpha=1)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_kernel_matches_numpy_maximum(dtype):
    """The relu kernel keeps NaN, maps -0 and negatives to +0, keeps the dtype, and reads
    non-contiguous inputs, as ``np.maximum(x, 0)`` (which it replaces) does."""
    x = np.array([[-2.0, -0.0, 0.0, np.nan], [np.inf, -np.inf, 1.5, 3.0]], dtype=dtype).T
    got = F.relu(paddle.to_tensor(x)).numpy()
    expected = np.maximum(x, x.dtype.type(0))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, expected)
    assert not np.signbit(got).any()


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 40, 6625])
def test_row_max_per_lane_skips_nan_like_the_single_chain(n):
    """``rows.row_max`` (one running maximum per vector lane, then the tail; strided rows one by
    one): the row's largest entry, NaN entries skipped, -inf for an empty or all-NaN row; the maximum
    anywhere in the row, lanes and tail."""
    from numba import njit

    from paddlectl.framework.kernels.rows import row_max

    call = njit(lambda row: row_max(row))
    rng = np.random.default_rng(n)
    for dtype in (np.float32, np.float64):
        for at in sorted({0, n // 2, n - 1}) if n else [None]:
            row = rng.standard_normal(n).astype(dtype)
            if at is not None:
                row[at] = 50.0
                row[(at + 1) % n] = np.nan
            finite = row[~np.isnan(row)]
            assert call(row) == (finite.max() if finite.size else -np.inf)
            column = np.repeat(row[:, None], 3, axis=1)[:, 1]
            assert column.strides[0] != column.itemsize and call(column) == call(row)
        assert call(np.full(n, np.nan, dtype)) == -np.inf
