"""paddle.signal.stft/istft against real Paddle 3.3.1 (values, shapes, dtypes, gradients) over
Paddle's arguments: hop and window lengths, windows, centring and its padding, normalisation,
one- or two-sided spectra, complex signals, ``length`` and ``return_complex``; typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from _complex_parity import compare, complex_array

import paddlectl.framework as ours
from paddlectl.framework.errors import ConfigError, DataError, DTypeError, ShapeError

RNG = np.random.default_rng(2)
X = RNG.uniform(-1, 1, (2, 20))
HANN = np.hanning(8) + 0.1


def _win(L, w):
    return L.to_tensor(w)


CASES = {
    "stft": (lambda L, x: L.signal.stft(x, n_fft=8, hop_length=2), X),
    "stft_defaults_1d": (lambda L, x: L.signal.stft(x, n_fft=8), X[0]),
    "stft_short_window_not_centred": (
        lambda L, x: L.signal.stft(x, 8, 3, 6, _win(L, np.hanning(6)), center=False, normalized=True), X,
    ),
    "stft_constant_pad_two_sided": (
        lambda L, x: L.signal.stft(x, n_fft=8, hop_length=4, pad_mode="constant", onesided=False), X,
    ),
    "stft_complex_signal": (lambda L, x: L.signal.stft(x, n_fft=8, hop_length=2, onesided=False), complex_array(RNG, (2, 16))),
    "istft_round_trip": (
        lambda L, x: L.signal.istft(L.signal.stft(x, n_fft=8, hop_length=2), n_fft=8, hop_length=2), X,
    ),
    "istft_window_length": (
        lambda L, x: L.signal.istft(
            L.signal.stft(x, n_fft=8, hop_length=2, window=_win(L, HANN)), 8, 2, window=_win(L, HANN), length=15
        ),
        X,
    ),
    "istft_longer_length_not_centred": (
        lambda L, x: L.signal.istft(L.signal.stft(x, n_fft=8, hop_length=2), 8, 2, center=False, length=40), X,
    ),
    "istft_two_sided_normalized": (
        lambda L, x: L.signal.istft(
            L.signal.stft(x, n_fft=8, hop_length=2, onesided=False, normalized=True),
            8, 2, normalized=True, onesided=False,
        ),
        X,
    ),
    "istft_return_complex": (
        lambda L, x: L.signal.istft(
            L.signal.stft(x, n_fft=8, hop_length=2, onesided=False), 8, 2, onesided=False, return_complex=True
        ),
        complex_array(RNG, (2, 16)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_gradients_match_paddle(real_paddle, case):
    fn, x = CASES[case]
    compare(real_paddle, fn, x)


def test_paddles_example_shapes():
    x = ours.randn([2, 4800], dtype=ours.float64)
    assert ours.signal.stft(x, n_fft=512).shape == [2, 257, 38]
    assert ours.signal.stft(x, n_fft=512, onesided=False).shape == [2, 512, 38]
    z = x + ours.randn([2, 4800], dtype=ours.float64) * 1j
    assert z.dtype == ours.complex128
    assert ours.signal.stft(z, n_fft=512, center=False, onesided=False).shape == [2, 512, 34]


def test_bad_arguments_are_typed_errors():
    x = ours.to_tensor(X)
    with pytest.raises(ShapeError, match="1-D or 2-D"):
        ours.signal.stft(ours.to_tensor(np.zeros((1, 2, 20))), n_fft=8)
    with pytest.raises(ConfigError, match="win_length"):
        ours.signal.stft(x, n_fft=8, win_length=9)
    with pytest.raises(ConfigError, match="pad_mode"):
        ours.signal.stft(x, n_fft=8, pad_mode="circular")
    with pytest.raises(ConfigError, match="onesided must be False"):
        ours.signal.stft(ours.to_tensor(complex_array(RNG, (20,))), n_fft=8, onesided=True)
    spectrum = ours.signal.stft(x, n_fft=8, hop_length=2)
    with pytest.raises(ShapeError, match="bins"):
        ours.signal.istft(spectrum, n_fft=10)
    with pytest.raises(DTypeError, match="complex spectrum"):
        ours.signal.istft(ours.real(spectrum), n_fft=8)
    with pytest.raises(DataError, match="NOLA"):
        ours.signal.istft(spectrum, n_fft=8, hop_length=2, window=ours.zeros([8], dtype="float64"))


def test_traced_with_a_symbolic_length_equals_eager():
    """The frame count is a shape expression of the signal length, so one traced program serves any length."""
    from paddlectl.framework.static import InputSpec

    def magnitudes(x):
        return ours.abs(ours.signal.stft(x, n_fft=16, hop_length=4))

    traced = ours.jit.to_static(magnitudes, input_spec=[InputSpec([None, None], "float32", "x")])
    for length in (64, 101):
        x = ours.to_tensor(RNG.standard_normal((2, length)).astype("float32"))
        np.testing.assert_allclose(traced(x).numpy(), magnitudes(x).numpy(), rtol=1e-6, atol=1e-6)
