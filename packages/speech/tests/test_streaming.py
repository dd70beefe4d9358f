"""Chunked Conformer encoding equals the full pass with the same chunk mask, on fixed inputs."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError
from paddlectl.speech.decode import greedy, log_softmax
from paddlectl.speech.models import Conformer, DeepSpeech2
from paddlectl.speech.models.conformer import chunk_mask
from paddlectl.speech.models.streaming import iter_chunks, stream_encode


@pytest.fixture(scope="module")
def encoder():
    paddle.seed(0)
    model = Conformer(40, dim=32, heads=2, ffn_dim=64, num_blocks=2, kernel_size=5, conv_channels=8)
    model.eval()
    return model


FEATURES = paddle.to_tensor(np.random.default_rng(3).normal(size=(1, 95, 40)).astype("float32"))


@pytest.mark.parametrize(("chunk", "left"), [(4, -1), (3, 1), (2, 0), (1, 2), (30, -1)])
def test_streaming_equals_the_full_pass(encoder, chunk, left):
    full = encoder(FEATURES, chunk_size=chunk, left_chunks=left).numpy()
    streamed = stream_encode(encoder, FEATURES, chunk, left).numpy()
    assert streamed.shape == full.shape
    np.testing.assert_allclose(streamed, full, atol=1e-4)
    head = np.random.default_rng(0).normal(size=(full.shape[-1], 5))
    assert greedy(log_softmax(streamed[0] @ head)) == greedy(log_softmax(full[0] @ head))


def test_chunks_come_out_as_they_are_ready(encoder):
    sizes = [c.shape[1] for c in iter_chunks(encoder, FEATURES, 4)]
    assert sizes == [4, 4, 4, 4, 4, 3]  # (95 - 7) // 4 + 1 = 23 frames


def test_the_chunk_mask_sees_its_chunk_and_the_left_chunks():
    mask = chunk_mask(6, 2, left_chunks=1) == 0
    assert mask[2].tolist() == [True, True, True, True, False, False]
    assert mask[5].tolist() == [False, False, True, True, True, True]
    assert (chunk_mask(6, 2) == 0)[5].all()


def test_full_attention_is_the_default(encoder):
    whole = encoder(FEATURES).numpy()
    chunked = encoder(FEATURES, chunk_size=2).numpy()
    assert not np.allclose(whole, chunked)  # the mask does restrict attention


def test_bad_streaming_settings_are_refused(encoder):
    with pytest.raises(ConfigError, match="chunk_size"):
        stream_encode(encoder, FEATURES, 0)
    with pytest.raises(ConfigError, match="left_chunks"):
        stream_encode(encoder, FEATURES, 2, -3)
    with pytest.raises(ConfigError, match="does not stream"):
        stream_encode(DeepSpeech2(40, hidden=8, num_layers=1), FEATURES, 2)


def test_streaming_gives_the_one_pass_text_on_the_committed_clips():
    """A trained Conformer (one epoch on the ten clips) read in chunks of 4 encoder frames (160 ms)
    with 2 chunks of left context writes what the one-pass decoding with the same chunk mask writes."""
    import yaml
    from _asr_setup import DATA, shared_model

    from paddlectl.framework.hapi.export import load_trained
    from paddlectl.speech.audio import read_audio
    from paddlectl.speech.task import AsrTask

    exported = shared_model("conformer_digits")
    config = yaml.safe_load((exported / "config.yml").read_text())
    model = load_trained(AsrTask(), config, exported.parent / "run" / "best")
    for clip in sorted((DATA / "wavs").glob("*.wav")):
        with paddle.no_grad():
            features = model.frontend(paddle.to_tensor(read_audio(clip)[None]))
            one_pass = model.head(model.encoder(features, chunk_size=4, left_chunks=2)).numpy()[0]
            streamed = model.head(stream_encode(model.encoder, features, 4, 2)).numpy()[0]
        np.testing.assert_allclose(streamed, one_pass, atol=1e-4)
        assert greedy(log_softmax(streamed)) == greedy(log_softmax(one_pass))
