"""``paddlectl train / export / predict / eval`` on det.picodet over a tiny generated set, end to end."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.detection.synth import generate_scenes

CONFIG = Path(__file__).parents[1] / "configs" / "picodet_lcnet_scenes.yml"
cli = CliRunner()


def _invoke(*args):
    return cli.invoke(app, [str(a) for a in args])


def tiny_config(root: Path) -> dict:
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    config["Global"].update(epochs=1, output_dir=str(root / "run"), log_interval=1)
    config["Architecture"].update(Backbone={"name": "LCNet", "scale": 0.25})
    config["Architecture"]["Neck"]["out_channels"] = 16
    config["Architecture"]["Head"]["num_convs"] = 1
    for split, name in (("Train", "train"), ("Eval", "val")):
        dataset = config[split]["dataset"]
        dataset["dataset_dir"] = str(root / name)
        for step in dataset["transforms"]:
            if "Resize" in step:
                step["Resize"]["target_size"] = [64, 64]
        config[split]["loader"]["batch_size"] = 4
    return config


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("picodet_cli")
    generate_scenes(root / "train", 8, seed=0, image_size=(64, 64), max_objects=3, min_size=10, max_size=24)
    generate_scenes(root / "val", 4, seed=1, image_size=(64, 64), max_objects=3, min_size=10, max_size=24)
    (root / "det.yml").write_text(yaml.safe_dump(tiny_config(root)), encoding="utf-8")
    result = _invoke("train", "-c", root / "det.yml", "-q")
    assert result.exit_code == 0, result.output
    result = _invoke(
        "export",
        "-w",
        root / "run" / "best",
        "-o",
        root / "model",
        "-c",
        root / "det.yml",
        "-O",
        "Export.nms=false",
        "--verify",
    )
    assert result.exit_code == 0, result.output
    return root


def test_train_logs_coco_ap_and_per_class_ap(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    (evaluation,) = [r for r in records if r["kind"] == "eval"]
    assert {"bbox_ap", "bbox_ap50", "bbox_ap75", "ap_digit", "ap_triangle", "loss"} <= set(evaluation)


def test_predict_writes_paddlex_records_over_the_threshold(trained, tmp_path):
    meta = json.loads((trained / "model" / "model.json").read_text())
    meta["postprocess"]["draw_threshold"] = 0.0  # an untrained model scores low: keep every box
    meta["postprocess"]["nms"]["score_threshold"] = 0.0
    (trained / "model" / "model.json").write_text(json.dumps(meta))
    out = tmp_path / "pred.json"
    result = _invoke("predict", "-m", trained / "model", "-i", trained / "val" / "images", "--json", out)
    assert result.exit_code == 0, result.output
    predictions = json.loads(out.read_text())["predictions"]
    assert len(predictions) == 4 and any(p["boxes"] for p in predictions)
    for box in (b for p in predictions for b in p["boxes"]):
        assert set(box) == {"cls_id", "label", "score", "coordinate"} and len(box["coordinate"]) == 4
        assert 0 <= box["score"] <= 1 and box["label"] in ("digit", "letter", "circle", "square", "triangle")


def test_eval_harness_reports_coco_ap(trained):
    result = _invoke(
        "eval", "-m", trained / "model", "-c", trained / "det.yml", "--output-dir", trained / "eval",
        "-o", "Export.nms=false", "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false",
        "-o", "Eval.harness.repeats=3", "-o", "Eval.harness.warmup=1", "-o", "Eval.harness.rounds=1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "bbox_ap50" in result.output


def test_export_with_nms_inside_is_refused_with_the_reason(trained, tmp_path):
    result = _invoke(
        "export",
        "-w",
        trained / "run" / "best",
        "-o",
        tmp_path / "m",
        "-c",
        trained / "det.yml",
        "-O",
        "Export.nms=true",
    )
    assert result.exit_code == 2
    assert "Export.nms is True; only false is supported" in result.output and not (tmp_path / "m").exists()


def test_a_box_outside_its_image_stops_train_naming_file_and_annotation(trained, tmp_path):
    doc = json.loads((trained / "train" / "annotations.json").read_text())
    doc["annotations"][0]["bbox"][0] = 60.0
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "images").symlink_to(trained / "train" / "images")
    (bad / "annotations.json").write_text(json.dumps(doc))
    config = tiny_config(trained)
    config["Train"]["dataset"]["dataset_dir"] = str(bad)
    config["Global"]["output_dir"] = str(tmp_path / "run")
    (tmp_path / "bad.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = _invoke("train", "-c", tmp_path / "bad.yml", "-q")
    assert result.exit_code == 2
    assert "annotations.json: annotation id 1" in result.output and "outside" in result.output
    assert not (tmp_path / "run").exists()
