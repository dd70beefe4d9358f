"""paddle.audio.load/save/info/resample on real files, and the hostile ones: corrupt, empty, 8-bit,
multi-channel, very long."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.audio import backend
from paddlectl.framework.errors import ConfigError, DataError

sf = pytest.importorskip("soundfile", reason="paddle.audio's file I/O needs the framework's audio extra")
pytest.importorskip("soxr", reason="paddle.audio's resampling needs the framework's audio extra")


def _tone(sr=16000, seconds=0.5, freq=440.0, channels=1):
    t = np.arange(int(sr * seconds)) / sr
    return np.stack([0.5 * np.sin(2 * np.pi * freq * (c + 1) * t) for c in range(channels)]).astype("float32")


@pytest.mark.parametrize("suffix", [".wav", ".flac"])
def test_save_load_info_round_trip(tmp_path, suffix):
    wave = _tone(channels=2)
    path = tmp_path / f"a{suffix}"
    paddle.audio.save(str(path), paddle.to_tensor(wave), 16000)
    loaded, sr = paddle.audio.load(str(path))
    assert sr == 16000 and loaded.shape == [2, 8000] and loaded.dtype == np.float32
    np.testing.assert_allclose(loaded.numpy(), wave, atol=1.0 / 2**15)  # 16-bit quantisation
    found = paddle.audio.info(str(path))
    assert (found.sample_rate, found.num_samples, found.num_channels, found.bits_per_sample) == (16000, 8000, 2, 16)
    frames_last, _ = paddle.audio.load(str(path), frame_offset=100, num_frames=50, channels_first=False)
    np.testing.assert_array_equal(frames_last.numpy(), loaded.numpy()[:, 100:150].T)
    raw, _ = paddle.audio.load(str(path), normalize=False)
    assert raw.dtype == np.int16


def test_8_bit_audio_decodes_to_its_true_values(tmp_path):
    wave = _tone()
    path = tmp_path / "u8.wav"
    sf.write(str(path), wave[0], 8000, subtype="PCM_U8")
    loaded, sr = paddle.audio.load(str(path))
    assert sr == 8000 and paddle.audio.info(str(path)).bits_per_sample == 8
    np.testing.assert_allclose(loaded.numpy()[0], wave[0], atol=1.0 / 2**7)


def test_multichannel_audio_keeps_its_channels_as_in_paddle(tmp_path):
    wave = _tone(channels=3)
    sf.write(str(tmp_path / "c3.wav"), wave.T, 16000)
    loaded, _ = paddle.audio.load(str(tmp_path / "c3.wav"))
    assert loaded.shape == [3, 8000]


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "not readable audio"),
        (b"RIFF\x24\x00\x00\x00WAVEjunkjunkjunkjunk" * 3, "not readable audio"),
        (b"\x00\x01" * 500, "not readable audio"),
    ],
    ids=["empty-file", "corrupt-header", "no-header"],
)
def test_unreadable_files_raise_data_errors(tmp_path, content, message):
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message) as caught:
        paddle.audio.load(str(path))
    assert "\n" not in str(caught.value) and "re-encode" in str(caught.value)


def test_a_wav_without_samples_and_a_missing_file(tmp_path):
    sf.write(str(tmp_path / "empty.wav"), np.zeros(0, "float32"), 16000)
    with pytest.raises(DataError, match="has no samples"):
        paddle.audio.load(str(tmp_path / "empty.wav"))
    with pytest.raises(DataError, match="does not exist"):
        paddle.audio.info(str(tmp_path / "nothing.wav"))
    with pytest.raises(DataError, match="is a folder"):
        paddle.audio.load(str(tmp_path))


def test_truncated_data_is_reported(tmp_path):
    path = tmp_path / "cut.wav"
    sf.write(str(path), _tone(seconds=1.0)[0], 16000)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # the header still promises a second of audio
    loaded, _ = paddle.audio.load(str(path))  # libsndfile reads what is there, as Paddle's soundfile backend
    assert 0 < loaded.shape[1] <= 8000


def test_very_long_audio_is_refused_with_the_way_to_read_it_in_parts(tmp_path, monkeypatch):
    path = tmp_path / "long.wav"
    sf.write(str(path), _tone(seconds=2.0)[0], 16000)
    monkeypatch.setattr(backend, "MAX_SECONDS", 1.0)
    with pytest.raises(DataError, match="frame_offset/num_frames"):
        paddle.audio.load(str(path))
    part, _ = paddle.audio.load(str(path), frame_offset=16000, num_frames=16000)
    assert part.shape == [1, 16000]


def test_save_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(DataError, match="2-D"):
        paddle.audio.save(str(tmp_path / "a.wav"), paddle.zeros([100]), 16000)
    with pytest.raises(ConfigError, match=r"\.wav or \.flac"):
        paddle.audio.save(str(tmp_path / "a.mp3"), paddle.zeros([1, 100]), 16000)
    with pytest.raises(ConfigError, match="sample_rate"):
        paddle.audio.save(str(tmp_path / "a.wav"), paddle.zeros([1, 100]), 0)
    assert not list(tmp_path.iterdir())


def test_resample_keeps_the_tone_and_the_duration():
    wave = _tone(sr=44100, seconds=1.0, channels=2)
    out = paddle.audio.resample(paddle.to_tensor(wave), 44100, 16000).numpy()
    assert out.shape == (2, 16000) and out.dtype == np.float32
    peak = np.argmax(np.abs(np.fft.rfft(out[0])))
    assert peak == 440  # 1 s of audio: bin k is k Hz
    np.testing.assert_allclose(out[1, 1000:-1000], _tone(seconds=1.0, freq=880.0)[0, 1000:-1000], atol=2e-3)
    with pytest.raises(ConfigError, match="target_sr"):
        paddle.audio.resample(wave, 44100, 0)


def test_backends_name_soundfile_as_paddle_does():
    assert paddle.audio.backends.list_available_backends() == ["soundfile"]
    assert paddle.audio.backends.get_current_backend() == "soundfile"
    paddle.audio.backends.set_backend("soundfile")
    with pytest.raises(ConfigError, match="'wave_backend' is not available"):
        paddle.audio.backends.set_backend("wave_backend")
