"""The recognisers: shapes, a few training steps lower the CTC loss, export serves any length."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.nn import functional as F
from paddlectl.speech.models import AsrModel, Conformer, DeepSpeech2, Frontend
from paddlectl.speech.models.layers import subsampled_length

RNG = np.random.default_rng(0)


def small(kind):
    paddle.seed(0)
    encoder = (
        Conformer(40, dim=32, heads=2, ffn_dim=64, num_blocks=2, kernel_size=5, conv_channels=8)
        if kind == "Conformer"
        else DeepSpeech2(40, conv_channels=8, hidden=32, num_layers=2)
    )
    return AsrModel(Frontend(n_mels=40), encoder, num_classes=6)


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


@pytest.mark.parametrize("kind", ["DeepSpeech2", "Conformer"])
def test_export_takes_raw_audio_of_any_length(tmp_path, kind):
    from paddlectl.framework import inference, jit
    from paddlectl.framework.jit import InputSpec

    model = small(kind)
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
