"""``paddlectl train / export / predict / eval`` on a tiny ocr.rec config, end to end: the exported
model carries the dictionary and the line preparation, and serves without the config."""

import json

import pytest
import yaml
from _ocr_lines import rec_config, write_lines
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.framework.jit.saved_model import MODEL_JSON

cli = CliRunner()


def _invoke(*args):
    return cli.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("rec_cli")
    label = write_lines(root / "data", n=16)
    config = root / "rec.yml"
    config.write_text(yaml.safe_dump(rec_config(root / "data", label, root / "run")), encoding="utf-8")
    result = _invoke("train", "-c", config, "-q")
    assert result.exit_code == 0, result.output
    result = _invoke("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output
    return root


def test_train_writes_checkpoints_and_rec_metrics(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2]
    (evaluation,) = [r for r in records if r["kind"] == "eval"]
    assert {"acc", "acc_with_space", "norm_edit_dis", "loss"} <= set(evaluation)


def test_export_stores_the_line_preparation_and_the_dictionary(trained):
    meta = json.loads((trained / "model" / MODEL_JSON).read_text())
    pre, post = meta["preprocess"], meta["postprocess"]
    assert pre["image_shape"] == [3, 32, 96] and pre["img_mode"] == "BGR"
    assert pre["mean"] == pre["std"] == [0.5, 0.5, 0.5]
    assert post["character"] == list("abcdef") and post["use_space_char"] is False
    assert "character_dict_path" not in post  # the characters themselves travel with the model


def test_predict_reads_lines_with_the_exported_model(trained, tmp_path):
    out = tmp_path / "pred.json"
    result = _invoke("predict", "-m", trained / "model", "-i", trained / "data" / "img", "--json", out)
    assert result.exit_code == 0, result.output
    predictions = json.loads(out.read_text())["predictions"]
    assert len(predictions) == 16
    assert all(set(p["label"]) <= set("abcdef") and 0 <= p["score"] <= 1 for p in predictions)


def test_a_dictionary_that_does_not_fit_the_model_is_a_usage_error(trained, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    for item in (trained / "model").iterdir():
        (model / item.name).write_bytes(item.read_bytes())
    meta = json.loads((model / MODEL_JSON).read_text())
    meta["postprocess"]["character"] = list("abcdefg")
    (model / MODEL_JSON).write_text(json.dumps(meta))
    result = _invoke("predict", "-m", model, "-i", trained / "data" / "img" / "0.png", "--json", tmp_path / "p.json")
    assert result.exit_code == 2
    assert "gives 7 classes per step, its dictionary has 8" in result.output
    assert not (tmp_path / "p.json").exists()


def test_eval_reports_rec_accuracy(trained):
    result = _invoke(
        "eval", "-m", trained / "model", "-c", trained / "rec.yml", "--output-dir", trained / "eval",
        "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false", "-o", "Eval.harness.repeats=5",
        "-o", "Eval.harness.warmup=1", "-o", "Eval.harness.rounds=1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "norm_edit_dis" in result.output and "acc_with_space" in result.output


def test_a_bad_label_line_stops_train_with_its_file_and_line(trained, tmp_path):
    bad = trained / "data" / "bad.txt"
    bad.write_text("img/0.png\tabc\nimg/1.png\n", encoding="utf-8")
    config = yaml.safe_load((trained / "rec.yml").read_text())
    config["Train"]["dataset"]["label_file_list"] = [str(bad)]
    config["Global"]["output_dir"] = str(tmp_path / "run")
    (tmp_path / "bad.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = _invoke("train", "-c", tmp_path / "bad.yml", "-q")
    assert result.exit_code == 2
    assert "bad.txt:2: expected 'image" in result.output
    assert not (tmp_path / "run").exists()


def test_exporting_with_another_dictionary_is_refused_at_load(trained, tmp_path):
    (tmp_path / "dict7.txt").write_text("".join(f"{c}\n" for c in "abcdefg"), encoding="utf-8")
    result = _invoke(
        "export", "-w", trained / "run" / "best", "-o", tmp_path / "model", "-c", trained / "rec.yml",
        "-O", f"PostProcess.character_dict_path={tmp_path / 'dict7.txt'}",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "fc.weight" in result.output and "[32, 7]" in result.output and "[32, 8] in the model" in result.output
    assert not (tmp_path / "model").exists()
