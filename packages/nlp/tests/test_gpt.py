"""The GPT decoder: causal (a later token never changes earlier logits), the cache gives the same
logits as the whole sequence, sizes are checked, and the export serves any sequence length."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import Predictor
from paddlectl.framework.jit.saved_model import read_model_dir
from paddlectl.framework.static import InputSpec
from paddlectl.nlp.gpt import GPTConfig, GPTLMHeadModel

SIZES = dict(vocab_size=40, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=16)


@pytest.fixture(scope="module")
def model():
    paddle.seed(3)
    gpt = GPTLMHeadModel(GPTConfig(**SIZES))
    gpt.eval()
    return gpt


def _ids(batch, length, seed=0):
    return np.random.default_rng(seed).integers(0, SIZES["vocab_size"], (batch, length)).astype("int64")


def test_a_later_token_does_not_change_earlier_logits(model):
    ids = _ids(2, 9)
    changed = ids.copy()
    changed[:, 6:] = (changed[:, 6:] + 1) % SIZES["vocab_size"]
    a, b = model(paddle.to_tensor(ids)).numpy(), model(paddle.to_tensor(changed)).numpy()
    np.testing.assert_allclose(a[:, :6], b[:, :6], atol=1e-5)
    assert np.abs(a[:, 6:] - b[:, 6:]).max() > 1e-3


def test_the_cache_gives_the_logits_of_the_whole_sequence(model):
    ids = _ids(2, 10, seed=1)
    whole = model(paddle.to_tensor(ids)).numpy()
    logits, cache = model(paddle.to_tensor(ids[:, :4]), use_cache=True)
    steps = [logits.numpy()]
    for t in range(4, 10):
        logits, cache = model(paddle.to_tensor(ids[:, t : t + 1]), cache=cache, use_cache=True)
        steps.append(logits.numpy())
    np.testing.assert_allclose(np.concatenate(steps, axis=1), whole, atol=1e-5)
    assert len(cache) == SIZES["num_hidden_layers"] and cache[0][0].shape == [2, 10, 4, 8]


def test_a_cache_of_another_depth_is_a_data_error(model):
    _, cache = model(paddle.to_tensor(_ids(1, 3)), use_cache=True)
    for wrong in (cache[:1], []):
        with pytest.raises(DataError, match=f"the cache holds {len(wrong)} layers, the model has 2"):
            model(paddle.to_tensor(_ids(1, 1)), cache=wrong, use_cache=True)


def test_tied_embeddings_share_the_output_matrix():
    tied = GPTLMHeadModel(GPTConfig(**SIZES))
    untied = GPTLMHeadModel(GPTConfig(**SIZES, tie_word_embeddings=False))
    count = lambda m: sum(int(np.prod(p.shape)) for p in m.parameters())  # noqa: E731
    assert count(untied) - count(tied) == SIZES["vocab_size"] * SIZES["hidden_size"]


def test_a_sequence_longer_than_the_positions_is_a_data_error(model):
    with pytest.raises(DataError, match="longer than the model's 16 positions"):
        model(paddle.to_tensor(_ids(1, 17)))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"num_attention_heads": 5}, "not a multiple"),
        ({"hidden_size": 0}, "positive"),
        ({"hidden_dropout_prob": 1.0}, r"\[0, 1\)"),
    ],
)
def test_bad_sizes_are_config_errors(change, message):
    with pytest.raises(ConfigError, match=message):
        GPTConfig(**{**SIZES, **change})


def test_the_export_serves_two_lengths_as_eager(model, tmp_path):
    path = str(tmp_path / "gpt")
    paddle.jit.save(model, path, input_spec=[InputSpec([None, None], "int64", "input_ids")], verify_inputs=[_ids(2, 5)])
    predictor = Predictor(Config(path), read_model_dir(path))
    for batch, length in ((1, 3), (3, 13)):
        ids = _ids(batch, length, seed=length)
        (served,) = predictor.run([ids])
        assert served.shape == (batch, length, SIZES["vocab_size"])
        np.testing.assert_allclose(served, model(paddle.to_tensor(ids)).numpy(), atol=1e-4, rtol=1e-4)
