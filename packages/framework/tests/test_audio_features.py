"""paddle.audio's feature layers and functional API against librosa (the definitions) and real Paddle
(the defaults), their gradients against finite differences, and their export as part of a model."""

import math

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.audio import features, functional
from paddlectl.framework.errors import ConfigError, DTypeError, ShapeError
from paddlectl.framework.static import InputSpec

librosa = pytest.importorskip("librosa", reason="librosa (the framework's test extra) is the features' oracle")

SR = 16000


def _signal(n=SR, seed=0, dtype="float64"):
    """A tone, a chirp and noise: energy in every band, so a relative comparison is meaningful."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / SR
    y = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.3 * np.sin(2 * np.pi * (200 + 3000 * t) * t)
    return (y + 0.05 * rng.standard_normal(n)).astype(dtype)


def _assert_close(got, expected, rtol=1e-4):
    """Relative 1e-4 elementwise, each element against its own size or a 1e-4 share of the largest."""
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


STFT = dict(n_fft=512, hop_length=160, win_length=400, window="hamming")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("power", [1.0, 2.0])
def test_spectrogram_matches_librosa(dtype, power):
    y = _signal(dtype=dtype)
    got = features.Spectrogram(power=power, dtype=dtype, **STFT)(paddle.to_tensor(y[None])).numpy()[0]
    expected = np.abs(librosa.stft(y.astype("float64"), pad_mode="reflect", **STFT)) ** power
    assert got.dtype == np.dtype(dtype) and got.shape == expected.shape
    _assert_close(got, expected)


@pytest.mark.parametrize("htk,norm", [(False, "slaney"), (True, None), (True, "slaney")])
def test_mel_and_log_mel_match_librosa(htk, norm):
    y = _signal(dtype="float64")
    settings = dict(sr=SR, n_mels=40, f_min=20.0, f_max=7600.0, htk=htk, norm=norm, dtype="float64", **STFT)
    mel = features.MelSpectrogram(**settings)(paddle.to_tensor(y[None])).numpy()[0]
    expected = librosa.feature.melspectrogram(
        y=y, sr=SR, n_mels=40, fmin=20.0, fmax=7600.0, htk=htk, norm=norm, pad_mode="reflect", **STFT
    )
    _assert_close(mel, expected)
    log_mel = features.LogMelSpectrogram(**settings, top_db=80.0)(paddle.to_tensor(y[None])).numpy()[0]
    _assert_close(log_mel, librosa.power_to_db(expected, top_db=80.0))


def test_mfcc_matches_librosa():
    y = _signal(dtype="float64")
    got = features.MFCC(sr=SR, n_mfcc=13, n_mels=40, dtype="float64", **STFT)(paddle.to_tensor(y[None])).numpy()[0]
    mel = librosa.feature.melspectrogram(y=y, sr=SR, n_mels=40, fmin=50.0, fmax=SR // 2, pad_mode="reflect", **STFT)
    _assert_close(got, librosa.feature.mfcc(S=librosa.power_to_db(mel, top_db=None), n_mfcc=13))


def test_float32_features_stay_within_1e4_of_librosa():
    y = _signal(dtype="float32")
    got = features.LogMelSpectrogram(sr=SR, n_mels=80, **STFT)(paddle.to_tensor(y[None])).numpy()[0]
    mel = librosa.feature.melspectrogram(y=y.astype("float64"), sr=SR, n_mels=80, fmin=50.0, pad_mode="reflect", **STFT)
    _assert_close(got, librosa.power_to_db(mel, top_db=None))


def test_functional_matches_librosa():
    freqs = np.array([0.0, 60.0, 999.0, 1000.0, 1001.0, 4000.0, 11025.0])
    for htk in (False, True):
        mels = librosa.hz_to_mel(freqs, htk=htk)
        np.testing.assert_allclose(functional.hz_to_mel(paddle.to_tensor(freqs), htk=htk).numpy(), mels, rtol=1e-7)
        assert functional.hz_to_mel(4000.0, htk=htk) == pytest.approx(float(mels[5]), rel=1e-9)
        np.testing.assert_allclose(
            functional.mel_to_hz(paddle.to_tensor(mels), htk=htk).numpy(), freqs, rtol=1e-7, atol=1e-9
        )
        np.testing.assert_allclose(
            functional.mel_frequencies(64, 50.0, 8000.0, htk, "float64").numpy(),
            librosa.mel_frequencies(64, fmin=50.0, fmax=8000.0, htk=htk),
            rtol=1e-9,
        )
    np.testing.assert_allclose(
        functional.fft_frequencies(SR, 512, "float64").numpy(), librosa.fft_frequencies(sr=SR, n_fft=512)
    )
    np.testing.assert_allclose(
        functional.compute_fbank_matrix(SR, 512, 40, 20.0, None, False, "slaney", "float64").numpy(),
        librosa.filters.mel(sr=SR, n_fft=512, n_mels=40, fmin=20.0, dtype=np.float64),
        rtol=1e-9,
        atol=1e-12,
    )
    spect = np.abs(np.random.default_rng(1).standard_normal((4, 9))) ** 3
    np.testing.assert_allclose(
        functional.power_to_db(paddle.to_tensor(spect), ref_value=0.5, top_db=40.0).numpy(),
        librosa.power_to_db(spect, ref=0.5, top_db=40.0),
        rtol=1e-9,
    )
    scipy_fft = pytest.importorskip("scipy.fft")
    basis = scipy_fft.dct(np.eye(40), type=2, norm="ortho", axis=0)[:13].T
    np.testing.assert_allclose(functional.create_dct(13, 40, dtype="float64").numpy(), basis, atol=1e-12)


@pytest.mark.parametrize(
    "window",
    ["hann", "hamming", "blackman", "nuttall", "bartlett", "triang", "bohman", "cosine", "tukey", ("tukey", 0.3),
     ("gaussian", 3.0), ("general_gaussian", 1.5, 4.0), ("exponential", None, 2.0), ("kaiser", 8.0), "taylor"],
    ids=str,
)  # fmt: skip
@pytest.mark.parametrize("fftbins", [True, False])
def test_windows_match_scipy(window, fftbins):
    signal = pytest.importorskip("scipy.signal")
    for n in (1, 7, 8, 400):
        got = functional.get_window(window, n, fftbins=fftbins).numpy()
        np.testing.assert_allclose(got, signal.get_window(window, n, fftbins=fftbins), atol=1e-12)


def test_defaults_are_paddles_not_librosas(real_paddle):
    pytest.importorskip("paddle.audio", reason="PaddlePaddle's paddle.audio is the oracle of the defaults")
    y = _signal(n=22050, dtype="float32")[None].repeat(2, axis=0)
    y[1] *= 0.25  # power_to_db's top_db floor is over the whole batch, as in Paddle
    for name in ("Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"):
        got = getattr(features, name)()(paddle.to_tensor(y)).numpy()
        expected = getattr(real_paddle.audio.features, name)()(real_paddle.to_tensor(y)).numpy()
        assert got.shape == expected.shape, name
        _assert_close(got, expected)
    top = functional.power_to_db(paddle.to_tensor(y**2)).numpy()
    _assert_close(top, real_paddle.audio.functional.power_to_db(real_paddle.to_tensor(y**2)).numpy())
    for args in [(16000, 512), (22050, 2048, 128, 30.0, 8000.0, True, 2.0)]:
        got = functional.compute_fbank_matrix(*args).numpy()
        _assert_close(got, real_paddle.audio.functional.compute_fbank_matrix(*args).numpy())
    _assert_close(functional.create_dct(20, 64).numpy(), real_paddle.audio.functional.create_dct(20, 64).numpy())
    np.testing.assert_allclose(
        functional.mel_frequencies().numpy(), real_paddle.audio.functional.mel_frequencies().numpy(), rtol=1e-5
    )


def test_log_mel_gradient_matches_finite_differences():
    layer = features.LogMelSpectrogram(sr=SR, n_fft=64, hop_length=16, n_mels=8, dtype="float64")
    y = _signal(n=200, dtype="float64")[None]
    weights = np.random.default_rng(2).standard_normal(layer(paddle.to_tensor(y)).shape)

    def objective(values):
        return float((layer(paddle.to_tensor(values)).numpy() * weights).sum())

    x = paddle.to_tensor(y, stop_gradient=False)
    (layer(x) * paddle.to_tensor(weights)).sum().backward()
    eps = 1e-6
    for i in (0, 17, 100, 160, 199):
        up, down = y.copy(), y.copy()
        up[0, i] += eps
        down[0, i] -= eps
        assert x.grad.numpy()[0, i] == pytest.approx((objective(up) - objective(down)) / (2 * eps), rel=1e-5, abs=1e-7)


def test_exported_model_carries_its_front_end(tmp_path):
    """A traced front-end + linear head runs from the saved directory on audio of another length."""

    class Head(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.front = features.LogMelSpectrogram(sr=SR, n_fft=400, hop_length=160, n_mels=40)
            self.proj = paddle.nn.Linear(40, 5)

        def forward(self, wave):
            return self.proj(self.front(wave).transpose([0, 2, 1]))

    model = Head()
    example = _signal(n=8000, dtype="float32")[None]
    report = paddle.jit.save(
        model, str(tmp_path / "m"), input_spec=[InputSpec([None, None], "float32")], verify_inputs=[example]
    )
    assert all(r["passed"] for r in report)
    assert set(model.state_dict()) == {
        "front._melspectrogram._spectrogram.fft_window",
        "front._melspectrogram.fbank_matrix",
        "proj.weight",
        "proj.bias",
    }
    loaded = paddle.jit.load(str(tmp_path / "m"))
    other = _signal(n=12345, seed=3, dtype="float32")[None].repeat(3, axis=0)
    np.testing.assert_allclose(
        loaded(paddle.to_tensor(other)).numpy(), model(paddle.to_tensor(other)).numpy(), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: features.Spectrogram(n_fft=256, win_length=400), "win_length"),
        (lambda: features.MFCC(n_mfcc=80, n_mels=64), "n_mfcc"),
        (lambda: features.MelSpectrogram(window="gaussian"), "needs parameters"),
        (lambda: features.Spectrogram(window="rectangle"), "unknown window"),
        (lambda: features.Spectrogram(hop_length=0), "hop_length"),
        (lambda: features.Spectrogram(pad_mode="wrap"), "pad_mode"),
        (lambda: features.LogMelSpectrogram(amin=0), "amin"),
        (lambda: features.MelSpectrogram(sr=16000, f_min=9000.0), "f_min"),
    ],
)
def test_bad_settings_raise_config_errors(build, message):
    with pytest.raises(ConfigError, match=message):
        build()


def test_bad_waveforms_name_the_fix():
    layer = features.MelSpectrogram(sr=SR, n_fft=512, hop_length=160)
    with pytest.raises(ShapeError, match="too short.*at least 257 samples"):
        layer(paddle.zeros([1, 100]))
    with pytest.raises(ShapeError, match=r"\(N, T\)"):
        layer(paddle.zeros([1, 1, 1000]))
    with pytest.raises(DTypeError, match="astype"):
        layer(paddle.zeros([1, 1000], dtype="float64"))
    assert layer(paddle.zeros([1000])).shape == [64, 7]  # one waveform without a batch axis, as paddle.signal.stft
    assert math.isfinite(float(features.LogMelSpectrogram(sr=SR)(paddle.zeros([1, 1000])).numpy().min()))


def test_signatures_are_paddles(real_paddle):
    import inspect

    pytest.importorskip("paddle.audio", reason="PaddlePaddle's paddle.audio is the oracle of the signatures")
    for name in ("Spectrogram", "MelSpectrogram", "LogMelSpectrogram", "MFCC"):
        theirs = inspect.signature(getattr(real_paddle.audio.features, name)).parameters
        ours = inspect.signature(getattr(features, name)).parameters
        assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()], name
    layer = features.MFCC(16000, 13, 400, 160, n_mels=40)  # positional, in Paddle's order
    assert layer._log_melspectrogram._melspectrogram._spectrogram.hop_length == 160
    with pytest.raises(TypeError, match="nfft"):
        features.MelSpectrogram(nfft=400)
