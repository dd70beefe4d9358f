"""The recognisers: shapes, a few training steps lower the CTC loss, export serves any length."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.nn import functional as F
from paddlectl.speech.models import AsrModel, Conformer, DeepSpeech2, Frontend
from paddlectl.speech.models.frontend import SPEECH_RANGE_DB, utterance_cmvn
from paddlectl.speech.models.layers import subsampled_length

RNG = np.random.default_rng(0)


def small(kind, utterance_cmvn=False):
    paddle.seed(0)
    encoder = (
        Conformer(40, dim=32, heads=2, ffn_dim=64, num_blocks=2, kernel_size=5, conv_channels=8)
        if kind == "Conformer"
        else DeepSpeech2(40, conv_channels=8, hidden=32, num_layers=2)
    )
    return AsrModel(Frontend(n_mels=40, utterance_cmvn=utterance_cmvn), encoder, num_classes=6)


def ctc(logits, labels):
    steps = logits.shape[1]
    batch = labels.shape[0]
    return F.ctc_loss(
        paddle.transpose(logits, [1, 0, 2]),
        labels,
        paddle.full([batch], steps, dtype="int64"),
        paddle.full([batch], labels.shape[1], dtype="int64"),
        blank=0,
        reduction="mean",
    )


@pytest.mark.parametrize("kind", ["DeepSpeech2", "Conformer"])
def test_logits_have_one_frame_per_40_ms(kind):
    model = small(kind)
    model.eval()
    audio = paddle.to_tensor(RNG.normal(size=(2, 8000)).astype("float32") * 0.1)
    logits = model(audio)
    frames = 8000 // 160 + 7  # the front-end appends 6 hops of silence
    assert logits.shape == [2, subsampled_length(frames), 6]
    assert model.frame_seconds == pytest.approx(0.04)


@pytest.mark.parametrize("kind", ["DeepSpeech2", "Conformer"])
def test_a_few_training_steps_lower_the_ctc_loss(kind):
    model = small(kind)
    audio = paddle.to_tensor(RNG.normal(size=(4, 6400)).astype("float32") * 0.1)
    labels = paddle.to_tensor(RNG.integers(1, 6, size=(4, 3)).astype("int32"))
    optimizer = paddle.optimizer.Adam(learning_rate=3e-3, parameters=model.parameters())
    losses = []
    for _ in range(6):
        loss = ctc(model(audio), labels)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize("kind,utterance_cmvn", [("DeepSpeech2", False), ("Conformer", False), ("DeepSpeech2", True)])
def test_export_takes_raw_audio_of_any_length(tmp_path, kind, utterance_cmvn):
    from paddlectl.framework import inference, jit
    from paddlectl.framework.jit import InputSpec

    model = small(kind, utterance_cmvn)
    model.eval()
    jit.save(model, str(tmp_path / "m"), input_spec=[InputSpec([None, None], "float32", "audio")])
    predictor = inference.create_predictor(inference.Config(str(tmp_path / "m")))
    for samples in (4000, 9000):
        audio = RNG.normal(size=(1, samples)).astype("float32") * 0.1
        with paddle.no_grad():
            want = model(paddle.to_tensor(audio)).numpy()
        np.testing.assert_allclose(predictor.run([audio])[0], want, rtol=1e-4, atol=1e-4)


def test_bad_architecture_settings_are_refused():
    with pytest.raises(ValueError, match="too small"):
        Conformer(5)
    with pytest.raises(ValueError, match="multiple of heads"):
        Conformer(40, dim=30, heads=4)
    with pytest.raises(ValueError, match="num_layers"):
        DeepSpeech2(40, num_layers=0)


def test_the_shortest_clip_gives_one_frame():
    model = small("Conformer")
    model.eval()
    assert model(paddle.to_tensor(np.zeros((1, 10), dtype="float32"))).shape == [1, 1, 6]


def _speech_like(seconds=0.8):
    """Harmonics of 150 Hz under a syllable-rate envelope: loud frames and quiet ones, like speech."""
    t = np.arange(int(seconds * 16000)) / 16000
    voiced = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(1, 40))
    return (0.1 * voiced * (0.55 + 0.45 * np.sin(2 * np.pi * 4 * t))).astype("float32")


def test_utterance_cmvn_ignores_padding_and_a_channels_per_band_gain():
    """Each band comes out with mean 0 and variance 1 over the loud frames, the same whether the clip
    is followed by silence or not (training windows, served clips), and a fixed per-band gain (a
    microphone's response) changes nothing."""
    frontend = Frontend(n_mels=40, utterance_cmvn=True)
    clip = _speech_like()
    padded = np.concatenate([clip, np.zeros(32000, "float32")])
    log_mel = frontend.log_mel(paddle.to_tensor(clip[None]))
    alone = utterance_cmvn(log_mel, frontend.floor_db).numpy()[0]
    with_silence = utterance_cmvn(frontend.log_mel(paddle.to_tensor(padded[None])), frontend.floor_db).numpy()[0]
    frames = alone.shape[1] - 6  # the last hops see the appended silence differently
    np.testing.assert_allclose(with_silence[:, :frames], alone[:, :frames], atol=1e-4)
    level = log_mel.numpy()[0].mean(axis=0)
    loud = level > max(level.max() - SPEECH_RANGE_DB, frontend.floor_db + 1)
    assert frames - 2 <= loud.sum() <= frames + 2 < len(level)  # the appended silence is left out of them
    np.testing.assert_allclose(alone[:, loud].mean(axis=1), 0.0, atol=1e-4)
    np.testing.assert_allclose(alone[:, loud].std(axis=1), 1.0, atol=0.02)
    mean_only = utterance_cmvn(log_mel, frontend.floor_db, variance=False).numpy()[0]
    np.testing.assert_allclose(mean_only[:, loud].mean(axis=1), 0.0, atol=1e-4)
    np.testing.assert_allclose(
        mean_only - log_mel.numpy()[0],
        np.broadcast_to(mean_only[:, :1] - log_mel.numpy()[0][:, :1], mean_only.shape),
        atol=1e-4,
    )
    channel = np.linspace(-12.0, 12.0, 40, dtype="float32")[None, :, None]  # a tilt: -12 dB low, +12 dB high
    through_channel = utterance_cmvn(log_mel + paddle.to_tensor(channel), frontend.floor_db).numpy()[0]
    np.testing.assert_allclose(through_channel, alone, atol=1e-4)
