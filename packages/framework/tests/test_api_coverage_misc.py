"""Signatures and behaviours Paddle 3.3.1's examples use (issue 30): mean(dtype=), linspace(device=,
requires_grad=), median of integers and of slices holding NaN, tensordot's one-list axes,
set_printoptions, Tensor.retain_grads. Each failed on the code before."""

from __future__ import annotations

import numpy as np
import pytest
from _parity import compare

import paddlectl.framework as ours
from paddlectl.framework.core import printing
from paddlectl.framework.errors import ConfigError

RNG = np.random.default_rng(30)


def test_mean_dtype_matches_paddle(real_paddle):
    compare(
        real_paddle,
        lambda P: lambda t: P.mean(t, axis=0, dtype="float64"),
        RNG.standard_normal((3, 4)).astype(np.float32),
    )


def test_linspace_takes_device_and_requires_grad():
    out = ours.linspace(0, 10, 5, device="cpu", requires_grad=True)
    assert out.numpy().tolist() == [0.0, 2.5, 5.0, 7.5, 10.0] and out.stop_gradient is False


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"axis": 1, "mode": "min"}, {"mode": "min"}])
def test_median_of_integers_matches_paddle(real_paddle, kwargs):
    x = RNG.integers(0, 20, (3, 4))

    def build(P):
        return lambda t: (lambda r: r[0] if isinstance(r, tuple) else r)(P.median(t, **kwargs))

    compare(real_paddle, build, x)


def test_median_min_of_slices_with_nan_matches_paddle(real_paddle):
    """NaN is the median of a slice that holds one (NumPy's and Paddle's), at its first NaN."""
    x = np.array([[1, np.nan, 3, np.nan], [1, 2, 3, 4], [np.nan, 1, 2, 3]])
    for k in (0, 1):
        compare(real_paddle, lambda P, k=k: lambda t: P.median(t, axis=1, keepdim=True, mode="min")[k], x, grads=False)


@pytest.mark.parametrize(
    ("shapes", "axes"),
    [(((2, 3, 4), (3, 3, 4)), [1, 2]), (((2, 3, 4, 5, 6), (3, 2, 4, 5, 6)), [[0, 1, 3, 4], [1, 0]])],
)
def test_tensordot_axes_forms_match_paddle(real_paddle, shapes, axes):
    compare(real_paddle, lambda P: lambda a, b: P.tensordot(a, b, axes=axes), *[RNG.standard_normal(s) for s in shapes])


def test_set_printoptions_summarises_and_rounds(monkeypatch):
    monkeypatch.setattr(printing, "OPTIONS", dict(printing.OPTIONS))
    ours.set_printoptions(precision=2, threshold=10, edgeitems=2)
    text = repr(ours.to_tensor(np.full((5, 20), 1 / 3, dtype=np.float32)))
    assert "..." in text and "0.33," in text and "0.333" not in text
    ours.set_printoptions(sci_mode=True)
    assert "3.33e-01" in repr(ours.to_tensor([1 / 3]))
    with pytest.raises(ConfigError, match="precision"):
        ours.set_printoptions(precision=-1)


def test_retain_grads_keeps_a_non_leaf_gradient():
    x = ours.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = x * x
    y.retain_grads()
    (y * 3).sum().backward()
    assert y.grad.numpy().tolist() == [3.0, 3.0, 3.0]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0, 18.0])


def test_one_element_tensors_of_any_rank_convert_to_python_scalars(real_paddle):
    """``float``/``int`` of a [1] tensor failed on NumPy 2, so ``paddle.scale(x, scale=tensor([2.]))``
    (which Paddle runs) did too."""
    for shape in ([], [1], [1, 1]):
        t = ours.full(shape, 2.5)
        assert float(t) == 2.5 and int(t) == 2
    got = ours.scale(ours.ones([2]), scale=ours.to_tensor([2.0]), bias=1.0)
    want = real_paddle.scale(real_paddle.ones([2]), scale=real_paddle.to_tensor([2.0]), bias=1.0)
    assert got.numpy().tolist() == want.numpy().tolist() == [3.0, 3.0]
    with pytest.raises(TypeError, match="one-element"):
        float(ours.ones([2]))


@pytest.mark.parametrize("name", ["new_zeros", "new_ones", "new_empty"])
def test_new_tensors_take_sizes_as_separate_ints(real_paddle, name):
    """``x.new_ones(3, 3)`` (Paddle's documented spelling) gave a TypeError."""
    got = getattr(ours.zeros([2], dtype="float64"), name)(3, 2)
    want = getattr(real_paddle.zeros([2], dtype="float64"), name)(3, 2)
    assert got.shape == list(want.shape) == [3, 2] and got.dtype == np.float64
    assert ours.zeros([2]).new_full([2, 2], 7.0).numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]


@pytest.mark.parametrize("shape", [[], [3], [2, 3], [2, 1, 4]])
def test_layout_queries_match_paddle(real_paddle, shape):
    mine, theirs = ours.zeros(shape), real_paddle.zeros(shape)
    assert mine.get_strides() == list(theirs.get_strides()) and mine.stride() == list(theirs.stride())
    assert mine.is_dense() == theirs.is_dense() and mine.is_dist() == theirs.is_dist()
    if shape:
        assert mine.stride(-1) == theirs.stride(-1)


def test_shape_mismatches_paddle_lets_through_are_refused():
    """Paddle's own examples assign a [2] value to a [2, 2] Linear weight (Paddle silently makes the
    weight [2]) and write a [3, 2] array into a [3, 3] output (Paddle replaces the output's shape);
    both hide a bug in the caller, so both are refused here with the shapes named."""
    from paddlectl.framework.errors import ShapeError

    attr = ours.ParamAttr(initializer=ours.nn.initializer.Assign(np.array([2.0, 2.0])))
    with pytest.raises(ShapeError, match=r"value has shape \[2\], parameter \[2, 2\]"):
        ours.nn.Linear(2, 2, weight_attr=attr)
    with pytest.raises(ShapeError, match="must match"):
        ours.assign(np.ones((3, 2), dtype=np.int64), ours.zeros([3, 3]))


def test_nanmedian_min_over_several_axes_matches_paddle(real_paddle):
    """mode='min' over a tuple of axes failed (int() of the tuple); Paddle returns the value only."""
    x = np.array([[np.nan, 2.0, 3.0], [0.0, 1.0, 2.0]])
    compare(real_paddle, lambda P: lambda t: P.nanmedian(t, (0, 1), mode="min"), x, grads=False)
