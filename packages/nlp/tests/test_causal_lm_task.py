"""nlp.causal_lm's parts: the windows, perplexity, the config checks and the served
pre/post-processing (training end to end is in test_causal_lm_cli)."""

import numpy as np
import pytest
from _causal_lm import tiny_config, write_corpus

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.nlp.causal_lm.data import TextWindows
from paddlectl.nlp.causal_lm.metric import Perplexity
from paddlectl.nlp.causal_lm.task import CausalLMTask
from paddlectl.nlp.text_cls.vocab import CharTable

TASK = CausalLMTask()


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm")
    return tiny_config(write_corpus(root / "corpus"), root / "run")


def test_windows_predict_the_next_character_and_spread_evenly():
    vocab = CharTable.from_texts(["abcdefghij"])
    windows = TextWindows("abcdefghij", vocab, seq_len=3)
    assert len(windows) == 3
    inputs, labels = windows[1]
    assert [vocab.tokens[i] for i in inputs] == list("def") and [vocab.tokens[i] for i in labels] == list("efg")
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
    assert TASK.preprocess(pre, ["Ｘ中"])[0][0, 0] == 1  # outside the vocabulary: [UNK]
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
