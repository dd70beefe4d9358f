"""generate(): top-k/top-p filtering on hand-made logits, cached and uncached greedy search give the
same tokens, sampling is seeded, eos finishes a sequence, and bad settings are typed errors."""

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.nlp.generation import generate, top_k_filter, top_p_filter
from paddlectl.nlp.gpt import GPTConfig, GPTLMHeadModel

PROBS = np.log(np.array([[0.05, 0.5, 0.15, 0.3]]))  # ranked: 1 (0.5), 3 (0.3), 2 (0.15), 0 (0.05)


@pytest.fixture(scope="module")
def model():
    paddle.seed(5)
    return GPTLMHeadModel(
        GPTConfig(vocab_size=30, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=40)
    )


def kept(filtered: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(np.isfinite(filtered[0]))]


def test_top_k_keeps_the_k_largest_and_ties():
    assert kept(top_k_filter(PROBS, 2)) == [1, 3]
    assert kept(top_k_filter(PROBS, 0)) == kept(top_k_filter(PROBS, 9)) == [0, 1, 2, 3]
    assert kept(top_k_filter(np.array([[1.0, 2.0, 2.0, 0.0]]), 1)) == [1, 2]


@pytest.mark.parametrize(
    "top_p, expected",
    [(0.4, [1]), (0.5, [1]), (0.75, [1, 3]), (0.81, [1, 2, 3]), (0.99, [0, 1, 2, 3]), (1.0, [0, 1, 2, 3])],
)
def test_top_p_keeps_the_smallest_set_that_reaches_the_mass(top_p, expected):
    assert kept(top_p_filter(PROBS, top_p)) == expected


def test_top_p_filters_each_row_on_its_own():
    rows = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.45, 0.45]]))
    filtered = top_p_filter(rows, 0.6)
    assert np.isfinite(filtered).tolist() == [[True, False, False], [False, True, True]]


def test_cached_and_uncached_greedy_search_give_the_same_tokens(model):
    prompt = np.random.default_rng(0).integers(0, 30, (3, 4))
    cached, cached_scores = generate(model, prompt, max_length=25, use_cache=True)
    uncached, uncached_scores = generate(model, prompt, max_length=25, use_cache=False)
    assert cached.shape == (3, 25)
    np.testing.assert_array_equal(cached, uncached)
    np.testing.assert_allclose(cached_scores, uncached_scores, atol=1e-5)


def test_greedy_search_takes_the_most_probable_token(model):
    prompt = np.array([[3, 1, 4]])
    (token,), _ = generate(model, prompt, max_length=1)
    logits = model(paddle.to_tensor(prompt)).numpy()[0, -1]
    assert token[0] == logits.argmax()


def test_sampling_is_seeded_and_top_k_1_is_greedy(model):
    prompt = np.array([[2, 7, 1]])
    first, _ = generate(model, prompt, max_length=15, decode_strategy="sampling", seed=4)
    again, _ = generate(model, prompt, max_length=15, decode_strategy="sampling", seed=4)
    other, _ = generate(model, prompt, max_length=15, decode_strategy="sampling", seed=5)
    np.testing.assert_array_equal(first, again)
    assert (first != other).any()
    greedy, _ = generate(model, prompt, max_length=15)
    one, _ = generate(model, prompt, max_length=15, decode_strategy="sampling", top_k=1, seed=9)
    cold, _ = generate(model, prompt, max_length=15, decode_strategy="sampling", temperature=1e-4, seed=9)
    np.testing.assert_array_equal(one, greedy)
    np.testing.assert_array_equal(cold, greedy)


def test_suppressed_tokens_are_never_generated(model):
    greedy, _ = generate(model, [[3, 1, 4]], max_length=10)
    out, _ = generate(model, [[3, 1, 4]], max_length=10, suppress_tokens=[int(greedy[0, 0])])
    assert greedy[0, 0] not in out


def test_sampling_draws_only_kept_tokens():
    def logits(ids):  # the same distribution every step
        return np.repeat(PROBS[:, None, :], ids.shape[1], axis=1).repeat(ids.shape[0], axis=0)

    out, _ = generate(logits, np.zeros((4, 1), "int64"), max_length=30, decode_strategy="sampling", top_p=0.75,
                      use_cache=False, seed=0)  # fmt: skip
    assert set(np.unique(out)) == {1, 3}


def test_eos_finishes_a_sequence_and_all_finished_stop_early():
    def logits(ids):  # row 0 says 9 (eos) at its 4th step, row 1 at its 6th; otherwise 1
        out = np.zeros((ids.shape[0], ids.shape[1], 10))
        step = ids.shape[1] - 1
        for row, when in enumerate((3, 5)):
            out[row, -1, 9 if step == when else 1] = 10.0
        return out

    tokens, scores = generate(logits, [[0], [0]], max_length=20, eos_token_id=9, pad_token_id=0, use_cache=False)
    assert tokens.tolist() == [[1, 1, 1, 9, 0, 0], [1, 1, 1, 1, 1, 9]]
    assert scores.shape == (2,) and (scores < 0).all()


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"input_ids": [[]]}, DataError, "prompt is empty"),
        ({"max_length": 38}, DataError, "exceed the model's 40 positions; lower max_length to at most 37"),
        ({"input_ids": [[30]]}, DataError, "vocabulary has 30 tokens"),
        ({"decode_strategy": "beam_search"}, ConfigError, "choose greedy_search or sampling"),
        ({"top_p": 0.0}, ConfigError, "top_p must be in"),
        ({"temperature": 0.0}, ConfigError, "temperature must be > 0"),
        ({"max_length": 0}, ConfigError, "max_length must be a positive"),
        ({"input_ids": [[0.5]]}, DataError, "integer token ids"),
        ({"suppress_tokens": [30]}, DataError, r"suppress_tokens holds 30; token ids are integers in \[0, 30\)"),
    ],
)
def test_bad_input_is_a_typed_error(model, kwargs, error, message):
    with pytest.raises(error, match=message):
        generate(model, **{"input_ids": [[1, 2, 3]], **kwargs})


def test_the_cache_needs_the_eager_model():
    with pytest.raises(ConfigError, match="use_cache needs the eager model"):
        generate(lambda ids: np.zeros((1, ids.shape[1], 4)), [[1]], max_length=2, use_cache=True)
