"""``paddlectl train / export / eval / predict`` on speech.asr configs, end to end on the committed clips."""

import json

import numpy as np
import pytest
import yaml
from _asr_setup import DATA, invoke, shared_model, tiny_config

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.jit.saved_model import MODEL_JSON
from paddlectl.speech.errors import VocabularyError
from paddlectl.speech.metrics import error_rates
from paddlectl.speech.task import AsrTask


@pytest.fixture(scope="module")
def exported():
    return shared_model()


def test_training_logs_wer_and_cer(exported):
    records = [json.loads(line) for line in (exported.parent / "run" / "metrics.jsonl").read_text().splitlines()]
    (evaluation,) = [r for r in records if r["kind"] == "eval"]
    assert {"loss", "wacc", "wer", "cer"} <= set(evaluation)
    assert evaluation["wacc"] == pytest.approx(1 - evaluation["wer"])


def test_export_carries_the_decoder_the_word_list_and_the_language_model(exported):
    meta = json.loads((exported / MODEL_JSON).read_text())
    pre, post = meta["preprocess"], meta["postprocess"]
    assert pre == {"task": "speech.asr", "sample_rate": 16000, "max_seconds": 120.0}
    assert post["classes"][:3] == ["", "", " "] and len(post["classes"]) == meta["outputs"][0]["shape"][-1]
    texts = [json.loads(line)["text"] for line in (DATA / "manifest.jsonl").read_text().splitlines()]
    assert post["words"] == sorted({w for t in texts for w in t.split()})
    assert post["lm"]["order"] == 2 and post["frame_seconds"] == pytest.approx(0.04)
    assert meta["inputs"][0]["shape"] == ["N", "audio_1"]  # raw audio of any length: the front-end is inside


def test_predict_and_eval_serve_the_exported_model(exported, tmp_path):
    out = tmp_path / "pred.json"
    # files, not the folder: predict's folder listing takes images and .npy only
    result = invoke("predict", "-m", exported, "-i", *sorted((DATA / "wavs").glob("*.wav")), "--json", out)
    assert result.exit_code == 0, result.output
    predictions = json.loads(out.read_text())["predictions"]
    assert len(predictions) == 10
    allowed = set(json.loads((exported / MODEL_JSON).read_text())["postprocess"]["words"])
    assert all(set(p["text"].split()) <= allowed for p in predictions)  # the word list holds
    assert all(w["start"] < w["end"] for p in predictions for w in p["words"])


def test_error_rates_are_jiwers():
    rates = error_rates(["one two three", "stop"], ["one two", "top"])
    assert rates["wer"] == pytest.approx(2 / 4)
    assert rates["cer"] == pytest.approx(7 / 17)  # " three" deleted, "s" deleted
    with pytest.raises(DataError, match="reference transcript is empty"):
        error_rates([" "], ["x"])


def test_config_mistakes_are_refused_before_training(tmp_path):
    task = AsrTask()
    config = tiny_config(tmp_path)
    config["Architecture"]["Encoder"]["hiden"] = 8
    with pytest.raises(ConfigError, match="hiden"):
        task.check_config(config)
    config = tiny_config(tmp_path)
    config["PostProcess"]["beam"] = 4
    with pytest.raises(ConfigError, match="beam_width"):
        task.check_config(config)
    config = tiny_config(tmp_path)
    config["PostProcess"]["vocab"] = str(tmp_path / "missing.txt")
    with pytest.raises(VocabularyError, match="does not exist"):
        task.check_config(config)


def test_a_vocabulary_that_does_not_fit_the_model_is_refused(exported, tmp_path):
    meta = json.loads((exported / MODEL_JSON).read_text())
    post = {**meta["postprocess"], "classes": meta["postprocess"]["classes"][:-1]}
    logits = np.zeros((1, 5, len(meta["postprocess"]["classes"])), dtype="float32")
    with pytest.raises(VocabularyError, match="vocabulary has"):
        AsrTask().postprocess(post, [logits])


def test_clips_longer_than_the_window_are_left_out(tmp_path):
    config = tiny_config(tmp_path)
    config["Train"]["dataset"]["max_seconds"] = 1.2
    train, _ = AsrTask().build_datasets(config)
    durations = [json.loads(line)["feat_shape"][0] for line in (DATA / "manifest.jsonl").read_text().splitlines()]
    assert len(train) == sum(d <= 1.2 for d in durations) and train.dropped == 10 - len(train)
    features, label = train[0]  # cached log-mel features: 1.2 s + 6 hops of silence, 10 ms hops
    assert features.shape == (40, 19200 // 160 + 7) and label.dtype == np.int32
    assert train[0][0] is features  # computed once
    config["Train"]["dataset"]["cache_features"] = False
    audio, _ = AsrTask().build_datasets(config)[0][0]
    assert audio.shape == (19200,)
    config["Train"]["dataset"]["max_seconds"] = 0.1
    with pytest.raises(DataError, match="every clip is longer"):
        AsrTask().build_datasets(config)


def test_conformer_config_trains_and_exports():
    model = shared_model("conformer_digits")
    assert yaml.safe_load((model / "config.yml").read_text())["Architecture"]["Encoder"]["name"] == "Conformer"
