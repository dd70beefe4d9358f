"""nlp.causal_lm's parts: the character vocabulary, the windows, perplexity, the config checks, the
served pre/post-processing, and a few training steps whose loss falls."""

import numpy as np
import pytest
from _causal_lm import tiny_config, write_corpus

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.nlp.causal_lm.data import TextWindows
from paddlectl.nlp.causal_lm.metric import Perplexity
from paddlectl.nlp.causal_lm.task import CausalLMTask
from paddlectl.nlp.causal_lm.vocab import UNK, CharVocab

TASK = CausalLMTask()


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm")
    return tiny_config(write_corpus(root / "corpus"), root / "run")


def test_the_vocabulary_is_unk_then_characters_by_frequency():
    vocab = CharVocab.from_texts(["abcabca\n", "cc"], min_freq=2)
    assert vocab.tokens == [UNK, "c", "a", "b"]
    ids, unknown = vocab.encode("cab\nz")
    assert ids.tolist() == [1, 2, 3, 0, 0] and unknown == ["\n", "z"]
    assert vocab.decode([2, 0]) == "a" + UNK
    assert CharVocab.from_texts(["abcabca"], max_size=2).tokens == [UNK, "a"]


@pytest.mark.parametrize("tokens", [["a", UNK], [UNK, "ab"], [UNK, "a", "a"]])
def test_a_malformed_stored_vocabulary_is_a_data_error(tokens):
    with pytest.raises(DataError):
        CharVocab(tokens)


def test_windows_predict_the_next_character_and_spread_evenly():
    vocab = CharVocab.from_texts(["abcdefghij"])
    windows = TextWindows("abcdefghij", vocab, seq_len=3)
    assert len(windows) == 3
    inputs, labels = windows[1]
    assert vocab.decode(inputs) == "def" and vocab.decode(labels) == "efg"
    text, ids = windows.raw(1)
    assert text == "def" and ids.tolist() == labels.tolist()
    assert TextWindows("abcdefghij" * 10, vocab, seq_len=3, max_windows=3).starts.tolist() == [0, 48, 96]
    with pytest.raises(DataError, match="too few"):
        TextWindows("abc", vocab, seq_len=3)


def test_perplexity_of_uniform_logits_is_the_vocabulary_size():
    metric = Perplexity()
    metric.update(*metric.compute(np.zeros((2, 5, 7), "float32"), np.ones((2, 5), "int64")))
    acc, ppl = metric.accumulate()
    assert ppl == pytest.approx(7.0) and metric.name() == ["acc", "ppl"]


def test_perplexity_is_exp_of_the_mean_negative_log_likelihood():
    rng = np.random.default_rng(0)
    logits, labels = rng.standard_normal((3, 4, 6)), rng.integers(0, 6, (3, 4))
    metric = Perplexity()
    for i in range(3):  # batches accumulate per character, not per batch
        metric.update(*metric.compute(logits[i : i + 1], labels[i : i + 1]))
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, labels[..., None], -1).mean()
    acc, ppl = metric.accumulate()
    assert ppl == pytest.approx(np.exp(nll)) and acc == pytest.approx((logits.argmax(-1) == labels).mean())


@pytest.mark.parametrize(
    "override, message",
    [
        ({"Metric": {"main_indicator": "ppl"}}, "lower perplexity is better; use acc"),
        ({"Eval": {"dataset": {"seq_len": 30}}}, "seq_len 30 exceeds Architecture.max_position_embeddings 24"),
        ({"Eval": {"dataset": {"root": "x"}}}, "unknown config key 'Eval.dataset.root'"),
        ({"PostProcess": {"max_lenght": 3}}, "did you mean 'max_length'"),
        ({"Architecture": {"name": "GPTLMHeadModel", "hiden_size": 3}}, "did you mean 'hidden_size'"),
        ({"Loss": {"name": "MSELoss"}}, "trains with CrossEntropyLoss"),
    ],
)
def test_config_mistakes_are_refused_before_training(config, override, message):
    with pytest.raises(ConfigError, match=message):
        TASK.check_config({**config, **override})


def test_serving_encodes_prompts_and_refuses_what_it_cannot_serve(config, tmp_path):
    pre = TASK.preprocess_config(config)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("中共中央\n", encoding="utf-8")  # the editor's final newline is dropped
    (ids,) = TASK.preprocess(pre, [prompt, "新年讲话"])
    assert ids.shape == (2, 4) and ids.dtype == np.int64
    assert TASK.preprocess(pre, ["Ｘ中"])[0][0, 0] == 0  # outside the vocabulary: [UNK]
    with pytest.raises(DataError, match="prompt is empty"):
        TASK.preprocess(pre, [""])
    with pytest.raises(DataError, match="attends over 24"):
        TASK.preprocess(pre, ["中" * 25])
    with pytest.raises(DataError, match="equally long"):
        TASK.preprocess(pre, ["中共", "中共中央"])


def test_postprocess_gives_the_most_probable_next_characters(config):
    post = TASK.postprocess_config(config)
    logits = np.zeros((1, 2, len(post["vocab"])))
    logits[0, -1, 5], logits[0, -1, 2] = 4.0, 3.0
    (prediction,) = TASK.postprocess(post, [logits])
    assert prediction["label"] == post["vocab"][5] and [t["id"] for t in prediction["topk"]] == [5, 2, 0]
    with pytest.raises(DataError, match="its vocabulary has"):
        TASK.postprocess(post, [logits[..., :-1]])


def test_a_few_training_steps_lower_the_loss(config):
    TASK.check_config(config)
    paddle.seed(0)
    model = TASK.build_model(config)
    train, _ = TASK.build_datasets(config)
    optimizer, _ = TASK.build_optimizer(config, model, 1)
    loss_fn = TASK.build_loss(config)
    batch = [train[i] for i in range(16)]
    inputs, labels = (paddle.to_tensor(np.stack(part)) for part in zip(*batch, strict=True))
    losses = []
    for _ in range(12):
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0]
