"""``nlp.token_cls``: BIO tags from People's Daily's word tags, seqeval's entity F1 on hand-made
cases, the packed tagger output, and ``paddlectl train / export / predict / eval`` on a tiny corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _nlp_corpus import evaluate, invoke, run_log, task_config, train_and_export, write_peoples_daily

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError
from paddlectl.nlp.token_cls.data import LABELS, bio_characters, pieces
from paddlectl.nlp.token_cls.metric import EntityF1
from paddlectl.nlp.token_cls.model import BiLSTMCrf, ConvCrf, EncoderCrf, unpack
from paddlectl.nlp.token_cls.task import TokenClsTask


def test_bio_tags_merge_surname_and_given_name():
    text, tags = bio_characters([("江", "nr"), ("泽民", "nr"), ("在", "p"), ("北京", "ns"), ("新华社", "nt")])
    assert text == "江泽民在北京新华社"
    assert tags == ["B-PER", "I-PER", "I-PER", "O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "I-ORG"]
    _, tags = bio_characters([("北京", "ns"), ("上海", "ns")])
    assert tags == ["B-LOC", "I-LOC", "B-LOC", "I-LOC"]  # two places stay two entities


def test_long_sentences_are_cut_after_a_clause_mark():
    text = "一二三，四五六七八九"
    got = pieces(text, list("OOOOOOOOOO"), 6)
    assert [t for t, _ in got] == ["一二三，", "四五六七八九"]
    assert [t for t, _ in pieces("一二三四五六七", ["O"] * 7, 3)] == ["一二三", "四五六", "七"]


TAGS = len(LABELS) + 2  # the CRF's start and stop tags too


def _packed(paths, tags=TAGS, steps=5):
    """A packed output whose CRF decodes to ``paths``: emissions one-hot on them, zero weights."""
    out = np.zeros((len(paths), steps + tags + 3, tags), "float32")
    for b, path in enumerate(paths):
        out[b, np.arange(len(path)), path] = 10.0
        out[b, -1, 0] = len(path)
    return out


def test_entity_f1_counts_whole_entities_as_seqeval_does():
    b_per, i_per, b_loc = LABELS.index("B-PER"), LABELS.index("I-PER"), LABELS.index("B-LOC")
    truth = np.array([[b_per, i_per, 0, b_loc, 0], [b_loc, 0, 0, 0, 0]])
    predicted = [[b_per, 0, 0, b_loc, 0], [b_loc, 0, 0]]  # PER cut short: wrong; both LOC right
    metric = EntityF1(LABELS)
    metric.update(*metric.compute(_packed(predicted), truth))
    f1, precision, recall = metric.accumulate()
    assert (precision, recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3)) and f1 == pytest.approx(2 / 3)
    with pytest.raises(DataError, match="tag ids"):
        metric.compute(_packed(predicted), truth + 7)


@pytest.mark.parametrize(
    "make",
    [
        lambda: BiLSTMCrf(20, len(LABELS), embed_dim=4, hidden_size=4),
        lambda: ConvCrf(20, len(LABELS), embed_dim=4, num_layers=2),
        lambda: EncoderCrf(20, len(LABELS), hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=8, max_position_embeddings=8),
    ],
    ids=["bilstm", "conv", "encoder"],
)  # fmt: skip
def test_the_packed_output_carries_emissions_weights_and_lengths(make):
    paddle.seed(0)
    model = make()
    ids = paddle.to_tensor(np.array([[3, 4, 5, 0], [6, 0, 0, 0]]))
    emissions, weights, lengths = unpack(model(ids))
    assert emissions.shape == [2, 4, 9] and lengths.numpy().tolist() == [3, 1]
    np.testing.assert_array_equal(weights.numpy(), model.crf.weights().numpy())
    with pytest.raises(DataError, match="tagger's output"):
        unpack(np.zeros((2, 4, 9)))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("token_cls")
    write_peoples_daily(root / "corpus")
    arch = {"name": "BiLSTMCrf", "embed_dim": 16, "hidden_size": 16, "dropout": 0.0}
    config = task_config("nlp.token_cls", root / "corpus", root / "run", arch, "CrfLoss", "f1", max_length=16)
    config["Optimizer"]["learning_rate"], config["Train"]["dataset"]["held_out"] = 0.05, 0.2
    config["Train"]["loader"]["batch_size"] = 16
    train_and_export(root, config)
    return root


def test_training_lowers_the_crf_loss(trained):
    losses, evaluations = run_log(trained / "run")
    assert len(losses) == 12 and np.mean(losses[-3:]) < 0.5 * np.mean(losses[:3])
    assert max(r["f1"] for r in evaluations) > 0.5


def test_predict_lists_entities_as_spans(trained, tmp_path):
    (tmp_path / "s.txt").write_text("今天王小明在北京访问新华社", encoding="utf-8")
    out = tmp_path / "pred.json"
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "s.txt", "--json", out)
    assert result.exit_code == 0, result.output
    (prediction,) = json.loads(out.read_text())["predictions"]
    assert len(prediction["tags"]) == 13
    assert {e["type"] for e in prediction["entities"]} <= {"PER", "LOC", "ORG"}


def test_eval_reports_entity_f1(trained):
    result = evaluate(trained)
    assert result.exit_code == 0, result.output
    assert "precision" in result.output and "recall" in result.output


def test_a_model_with_other_labels_is_refused():
    with pytest.raises(DataError, match="labels make 3"):
        TokenClsTask().postprocess({"labels": ["O", "B-X", "I-X"]}, [_packed([[0, 1]])])
