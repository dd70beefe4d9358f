"""``nlp.text_cls`` end to end on a tiny review corpus: ``paddlectl train / export / predict / eval``,
the loss falling, the metrics, and one-line errors for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from _hf_bert import VOCAB
from _hf_bert import write as write_bert
from _nlp_corpus import evaluate, invoke, run_log, task_config, train_and_export, write_reviews
from sklearn.metrics import f1_score

from paddlectl.framework.errors import DataError
from paddlectl.framework.jit.saved_model import MODEL_JSON
from paddlectl.nlp.text_cls.base import read_text
from paddlectl.nlp.text_cls.metric import ClassificationMetric, macro_f1
from paddlectl.nlp.text_cls.task import TextClsTask

ARCHITECTURES = {
    "CharCNN": {"name": "CharCNN", "embed_dim": 16, "num_filters": 16, "kernel_sizes": [2], "dropout": 0.0},
    "FastText": {"name": "FastText", "embed_dim": 16, "max_ngram": 3, "buckets": 997, "dropout": 0.0, "pooling": "sqrtn", "hidden": 8},
    "FastText-nb": {"name": "FastText", "embed_dim": 16, "max_ngram": 3, "buckets": 997, "dropout": 0.0, "pooling": "sqrtn", "weighting": "nb", "binary": True},
}  # fmt: skip
ARCH = ARCHITECTURES["CharCNN"]


def _config(root, output, architecture=ARCH):
    config = task_config("nlp.text_cls", root, output, architecture, "CrossEntropyLoss", "acc")
    config["Global"]["epochs"] = 3
    return config


@pytest.fixture(scope="module", params=list(ARCHITECTURES))
def trained(request, tmp_path_factory):
    """Each architecture trained, exported and served the same way."""
    root = tmp_path_factory.mktemp("text_cls")
    write_reviews(root / "corpus")
    train_and_export(root, _config(root / "corpus", root / "run", ARCHITECTURES[request.param]))
    return root


def test_training_lowers_the_loss_and_learns_the_marks(trained):
    losses, evaluations = run_log(trained / "run")
    assert len(losses) == 18 and np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3])
    assert max(r["acc"] for r in evaluations) >= 0.9


def test_predict_serves_text_files(trained, tmp_path):
    (tmp_path / "a.txt").write_text("这本书好棒\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("东西差烂了", encoding="utf-8")
    out = tmp_path / "pred.json"
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "a.txt", tmp_path / "b.txt", "--json", out)
    assert result.exit_code == 0, result.output
    assert [p["label"] for p in json.loads(out.read_text())["predictions"]] == ["positive", "negative"]


def test_predict_refuses_an_empty_text(trained, tmp_path):
    (tmp_path / "empty.txt").write_text(" \n", encoding="utf-8")
    result = invoke("predict", "-m", trained / "model", "-i", tmp_path / "empty.txt", "--json", tmp_path / "p.json")
    assert result.exit_code == 2 and "the text is empty" in result.output


def test_eval_reports_accuracy_and_macro_f1(trained):
    result = evaluate(trained)
    assert result.exit_code == 0, result.output
    assert "macro_f1" in result.output


def test_a_missing_corpus_file_is_a_usage_error(trained, tmp_path):
    (tmp_path / "c.yml").write_text(yaml.safe_dump(_config(tmp_path / "nowhere", tmp_path / "run")), encoding="utf-8")
    result = invoke("train", "-c", tmp_path / "c.yml", "-q")
    assert result.exit_code == 2 and "pos.txt" in result.output and "is missing" in result.output


def test_macro_f1_equals_scikit_learn():
    rng = np.random.default_rng(0)
    predicted, truth = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert macro_f1(predicted, truth, 3) == pytest.approx(f1_score(truth, predicted, average="macro"))
    assert macro_f1(np.zeros(4, int), np.zeros(4, int), 2) == 0.5  # a class absent everywhere scores 0


def test_labels_out_of_range_and_empty_texts_are_named():
    with pytest.raises(DataError, match=r"class ids in \[0, 2\)"):
        ClassificationMetric().compute(np.zeros((2, 2)), np.array([0, 2]))
    with pytest.raises(DataError, match="empty"):
        read_text("")
    with pytest.raises(DataError, match="logits"):
        TextClsTask().postprocess({"labels": ["negative", "positive"]}, [np.zeros((1, 3))])


def test_fine_tuning_a_pretrained_encoder_serves_with_its_tokenizer(tmp_path):
    """Architecture.pretrained: the checkpoint's weights start the encoder, its tokenizer encodes
    the text, and the exported model carries that tokenizer (served without the checkpoint)."""
    write_bert(tmp_path / "bert")
    write_reviews(tmp_path / "corpus", n=20)
    config = _config(tmp_path / "corpus", tmp_path / "run")
    config["Global"]["epochs"] = 1
    config["Architecture"] = {"name": "EncoderClassifier", "pretrained": str(tmp_path / "bert"), "dropout": 0.0}
    train_and_export(tmp_path, config)
    pre = json.loads((tmp_path / "model" / MODEL_JSON).read_text())["preprocess"]
    assert "chars" not in pre and '"你"' in pre["tokenizer"]
    (ids,) = TextClsTask().preprocess(pre, ["你好"])
    assert ids[0, :4].tolist() == [VOCAB.index(t) for t in ("[CLS]", "你", "好", "[SEP]")]
    (tmp_path / "a.txt").write_text("你好世界", encoding="utf-8")
    result = invoke("predict", "-m", tmp_path / "model", "-i", tmp_path / "a.txt", "--json", tmp_path / "p.json")
    assert result.exit_code == 0, result.output
