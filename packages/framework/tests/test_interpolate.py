"""interpolate / upsample and the resize layers: real Paddle parity, finite differences, errors."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import functional, layer

import paddlectl.framework as paddle
from paddlectl.framework.errors import DTypeError, ShapeError

F = paddle.nn.functional
rng = np.random.default_rng(5)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


CASES = [
    dict(size=(9, 4)),
    dict(size=[3, 3]),
    dict(scale_factor=2),
    dict(scale_factor=1.7),
    dict(scale_factor=(2, 3)),
    dict(size=(9, 4), mode="bilinear"),
    dict(size=(9, 12), mode="bilinear", align_corners=True),
    dict(size=(9, 12), mode="bilinear", align_mode=1),
    dict(scale_factor=1.7, mode="bilinear"),
    dict(scale_factor=0.6, mode="bilinear"),
    dict(scale_factor=0.6, mode="bilinear", align_corners=True),
    dict(size=(1, 1), mode="bilinear"),
    dict(size=(1, 1), mode="bilinear", align_corners=True),
    dict(size=(5, 7), mode="bilinear"),
    dict(size=(8, 8), mode="bilinear", data_format="NHWC"),
    dict(scale_factor=2, data_format="NHWC"),
]


@pytest.mark.parametrize("kwargs", CASES, ids=str)
def test_interpolate_matches_paddle(real_paddle, kwargs):
    functional(real_paddle, "interpolate", randn(2, 3, 5, 7), **kwargs)


def test_upsample_and_size_one_input(real_paddle):
    functional(real_paddle, "upsample", randn(1, 2, 3, 3), scale_factor=2, mode="bilinear")
    functional(real_paddle, "interpolate", randn(1, 1, 1, 1), size=(3, 2), mode="bilinear")
    functional(real_paddle, "interpolate", randn(1, 1, 1, 1), size=(3, 2))


def test_gradients_by_finite_differences(gradcheck):
    x = randn(1, 2, 3, 4)
    gradcheck(lambda t: F.interpolate(t, size=(5, 7), mode="bilinear"), x)
    gradcheck(lambda t: F.interpolate(t, scale_factor=0.5, mode="bilinear", align_corners=True), randn(1, 1, 5, 6))
    gradcheck(lambda t: F.interpolate(t, scale_factor=2), x)


def test_non_contiguous_input(real_paddle):
    from _parity import compare

    def build(mod):
        return lambda t: mod.nn.functional.interpolate(mod.transpose(t, [0, 3, 1, 2]), size=(6, 5), mode="bilinear")

    compare(real_paddle, build, randn(2, 4, 3, 2))


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: F.interpolate(paddle.to_tensor(randn(2, 3, 4)), size=(3, 3)), ShapeError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4))), ShapeError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4)), size=(2, 2), scale_factor=2), ShapeError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4)), size=(2, 2, 2)), ShapeError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4)), scale_factor=0.1), ShapeError),
        (lambda: F.interpolate(paddle.to_tensor(np.ones((1, 1, 4, 4), "int64")), size=(2, 2)), DTypeError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4)), size=(2, 2), mode="bicubic"), ValueError),
        (lambda: F.interpolate(paddle.to_tensor(randn(1, 1, 4, 4)), size=(2, 2), align_corners=True), ValueError),
    ],
)
def test_bad_input_raises_typed_error(call, error):
    with pytest.raises(error, match="interpolate"):
        call()


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        ("Upsample", dict(scale_factor=2)),
        ("Upsample", dict(size=(7, 5), mode="bilinear")),
        ("Upsample", dict(size=(7, 5), mode="bilinear", align_corners=True, align_mode=1)),
        ("UpsamplingNearest2D", dict(scale_factor=2)),
        ("UpsamplingBilinear2D", dict(size=(7, 9))),
    ],
    ids=str,
)
def test_layers_match_paddle(real_paddle, cls, kwargs):
    layer(real_paddle, cls, (), kwargs, randn(2, 3, 4, 5))


@pytest.mark.parametrize(
    ("rows", "cols"),
    [
        (np.arange(10) // 2, np.arange(14) // 2),  # 2x: repeated rows copied, columns written twice
        (np.arange(5), np.arange(56) // 8),  # a whole-number column factor of 8
        (np.arange(15) // 3, np.arange(21) // 3),
        (np.array([0, 0, 1, 3, 3, 4]), np.array([0, 0, 1, 3, 3, 6])),  # a gather with repeats
        (np.array([4, 2, 0]), np.array([6, 3, 1])),  # downsampling, no pattern
        (np.arange(5) // 2, np.arange(7) // 2),  # rows shorter than 2x, columns not 2 * W
    ],
)
def test_nearest_gather_fast_paths_match_the_numpy_gather(rows, cols):
    """``gather_grid`` copies repeated rows and writes whole-number column factors without a gather:
    the same values as the plain gather, serial and parallel."""
    from paddlectl.framework.kernels.pool import gather_grid

    x = np.random.default_rng(0).standard_normal((3, 5, 7)).astype(np.float32)
    want = x[:, rows[:, None], cols[None, :]]
    for variant in (gather_grid.serial, gather_grid.parallel):
        np.testing.assert_array_equal(variant(x, rows.astype(np.int64), cols.astype(np.int64)), want)
