"""paddle.fft against real Paddle 3.3.1: values, dtypes and gradients of every transform over the
norms, sizes and axes it takes, and the helpers (frequencies, shifts); bad arguments are typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from _complex_parity import compare, complex_array

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, DTypeError, ShapeError

RNG = np.random.default_rng(0)
REAL = RNG.uniform(-1, 1, (3, 6))
CPLX = complex_array(RNG, (3, 5))
CASES = {
    "fft": (lambda L, x: L.fft.fft(x), CPLX),
    "fft_n_ortho": (lambda L, x: L.fft.fft(x, n=7, norm="ortho"), CPLX),
    "fft_truncated_axis0": (lambda L, x: L.fft.fft(x, n=2, axis=0), CPLX),
    "ifft_forward_norm": (lambda L, x: L.fft.ifft(x, norm="forward"), CPLX),
    "fft_of_real": (lambda L, x: L.fft.fft(x), REAL),
    "rfft": (lambda L, x: L.fft.rfft(x), REAL),
    "rfft_n5_ortho": (lambda L, x: L.fft.rfft(x, n=5, norm="ortho"), REAL),
    "rfft_float32": (lambda L, x: L.fft.rfft(x), REAL.astype("float32")),
    "ihfft": (lambda L, x: L.fft.ihfft(x), REAL),
    "irfft": (lambda L, x: L.fft.irfft(x), CPLX),
    "irfft_n8_forward": (lambda L, x: L.fft.irfft(x, n=8, norm="forward"), CPLX),
    "irfft_n9": (lambda L, x: L.fft.irfft(x, n=9), CPLX),
    "hfft": (lambda L, x: L.fft.hfft(x), CPLX),
    "hfft_n7_ortho": (lambda L, x: L.fft.hfft(x, n=7, norm="ortho"), CPLX),
    "hfft_complex64": (lambda L, x: L.fft.hfft(x), CPLX.astype("complex64")),
    "fft2": (lambda L, x: L.fft.fft2(x), CPLX),
    "ifft2_s": (lambda L, x: L.fft.ifft2(x, s=(4, 4)), CPLX),
    "rfft2": (lambda L, x: L.fft.rfft2(x), REAL),
    "irfft2": (lambda L, x: L.fft.irfft2(x), CPLX),
    "hfft2_s": (lambda L, x: L.fft.hfft2(x, s=(3, 6)), CPLX),
    "ihfft2": (lambda L, x: L.fft.ihfft2(x), REAL),
    "fftn_s": (lambda L, x: L.fft.fftn(x, s=(2, 4)), CPLX),
    "ifftn_axes": (lambda L, x: L.fft.ifftn(x, axes=(0,), norm="ortho"), CPLX),
    "rfftn_axes_reversed": (lambda L, x: L.fft.rfftn(x, axes=(1, 0)), REAL),
    "irfftn_axes": (lambda L, x: L.fft.irfftn(x, axes=(0,)), CPLX),
    "hfftn": (lambda L, x: L.fft.hfftn(x), CPLX),
    "ihfftn": (lambda L, x: L.fft.ihfftn(x, norm="forward"), REAL),
    "fftshift": (lambda L, x: L.fft.fftshift(x), REAL),
    "ifftshift": (lambda L, x: L.fft.ifftshift(x), CPLX),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_gradients_match_paddle(real_paddle, case):
    fn, x = CASES[case]
    compare(real_paddle, fn, x, atol=1e-5 if x.dtype.itemsize <= 8 else 1e-6)


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n, d", [(5, 0.5), (8, 0.3), (1, 1.0)])
def test_frequencies_match_paddle(real_paddle, fn, n, d):
    theirs = getattr(real_paddle.fft, fn)(n, d=d)
    mine = getattr(ours.fft, fn)(n, d=d)
    assert mine.dtype == ours.float32 and str(theirs.dtype).endswith("float32")
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("axes", [1, (0,), (1, 0)])
def test_shifts_along_given_axes_are_numpys(axes):
    # Paddle 3.3.1's own ifftshift fails when given axes (its roll receives an array of shifts)
    x = np.arange(15.0).reshape(3, 5)
    np.testing.assert_array_equal(ours.fft.fftshift(ours.to_tensor(x), axes=axes).numpy(), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(ours.fft.ifftshift(ours.to_tensor(x), axes=axes).numpy(), np.fft.ifftshift(x, axes))


def test_integer_input_becomes_complex64_as_in_paddle(real_paddle):
    x = np.arange(6)
    assert ours.fft.fft(ours.to_tensor(x)).dtype == ours.complex64
    np.testing.assert_allclose(
        ours.fft.fft(ours.to_tensor(x)).numpy(), real_paddle.fft.fft(real_paddle.to_tensor(x)).numpy(), atol=1e-5
    )


def test_bad_arguments_are_typed_errors():
    x = ours.to_tensor(REAL)
    with pytest.raises(ConfigError, match="norm must be one of"):
        ours.fft.fft(x, norm="none")
    with pytest.raises(DTypeError, match="must be real"):
        ours.fft.rfft(ours.to_tensor(CPLX))
    with pytest.raises(ShapeError, match="same length"):
        ours.fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(ShapeError, match="repeat"):
        ours.fft.fft2(x, axes=(1, 1))
    with pytest.raises(ShapeError, match="exactly two axes"):
        ours.fft.fft2(x, axes=(0,))
    with pytest.raises(ShapeError, match=">= 1"):
        ours.fft.fft(x, n=0)
    with pytest.raises(ConfigError, match="positive int"):
        ours.fft.fftfreq(0)
