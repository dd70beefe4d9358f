"""``paddlectl train / export / predict / eval`` on det.picodet over a tiny generated set, end to end."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
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
    for name, nms in (("model", "false"), ("model_nms", "true")):  # NMS after the model, and inside it
        result = _invoke(
            "export", "-w", root / "run" / "best", "-o", root / name, "-c", root / "det.yml", "--verify",
            "-O", f"Export.nms={nms}", "-O", "PostProcess.score_threshold=0.0",  # an untrained model scores low
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    return root


def _predict(model: Path, images: Path, out: Path, *flags) -> list[dict]:
    result = _invoke("predict", "-m", model, "-i", images, "--json", out, *flags)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())["predictions"]


def test_the_shipped_cosine_schedule_spans_the_whole_run_it_documents():
    """The learning rate reaches its end with the last step of the documented run (2,000 scenes,
    batches of 16): a T_max left from another run length stops the decay half-way or restarts it."""
    text = CONFIG.read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    scenes = int(re.search(r"det synth --out \S+/train --n (\d+)", text).group(1))
    steps = config["Global"]["epochs"] * (scenes // config["Train"]["loader"]["batch_size"])
    assert config["Train"]["loader"]["drop_last"] is True
    assert config["Optimizer"]["lr"]["T_max"] == steps


def test_train_logs_coco_ap_and_per_class_ap(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    (evaluation,) = [r for r in records if r["kind"] == "eval"]
    assert {"bbox_ap", "bbox_ap50", "bbox_ap75", "ap_digit", "ap_triangle", "loss"} <= set(evaluation)


def test_predict_writes_paddlex_records_over_the_threshold(trained, tmp_path):
    predictions = _predict(trained / "model", trained / "val" / "images", tmp_path / "pred.json", "--threshold", "0")
    assert len(predictions) == 4 and any(p["boxes"] for p in predictions)
    for box in (b for p in predictions for b in p["boxes"]):
        assert set(box) == {"cls_id", "label", "score", "coordinate"} and len(box["coordinate"]) == 4
        assert 0 <= box["score"] <= 1 and box["label"] in ("digit", "letter", "circle", "square", "triangle")
    scores = sorted(b["score"] for p in predictions for b in p["boxes"])
    cut = scores[len(scores) // 2]
    kept = _predict(trained / "model", trained / "val" / "images", tmp_path / "cut.json", "--threshold", str(cut))
    assert sum(len(p["boxes"]) for p in kept) == sum(s >= cut for s in scores) < len(scores)


def test_predict_draws_boxes_beside_the_json(trained, tmp_path):
    predictions = _predict(trained / "model", trained / "val" / "images", tmp_path / "pred.json", "--threshold", "0")
    for p in predictions:
        assert Path(p["vis"]) == tmp_path / f"{Path(p['input']).stem}_vis.png"
        drawn, source = np.asarray(Image.open(p["vis"])), np.asarray(Image.open(p["input"]).convert("RGB"))
        assert drawn.shape == source.shape and (drawn != source).any() == bool(p["boxes"])


def test_export_with_nms_inside_gives_the_boxes_of_nms_after(trained, tmp_path):
    meta = json.loads((trained / "model_nms" / "model.json").read_text())
    assert meta["postprocess"]["nms_inside"] and len(meta["outputs"]) == 2
    images = trained / "val" / "images"
    after = _predict(trained / "model", images, tmp_path / "after.json", "--threshold", "0")
    inside = _predict(trained / "model_nms", images, tmp_path / "inside.json", "--threshold", "0")
    assert [len(p["boxes"]) for p in inside] == [len(p["boxes"]) for p in after]
    for a, b in zip((b for p in after for b in p["boxes"]), (b for p in inside for b in p["boxes"]), strict=True):
        assert (a["cls_id"], a["label"]) == (b["cls_id"], b["label"])
        np.testing.assert_allclose([a["score"], *a["coordinate"]], [b["score"], *b["coordinate"]], rtol=1e-5, atol=1e-4)


def test_eval_harness_reports_coco_ap(trained):
    result = _invoke(
        "eval", "-m", trained / "model", "-c", trained / "det.yml", "--output-dir", trained / "eval",
        "-o", "Export.nms=false", "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false",
        "-o", "Eval.harness.repeats=3", "-o", "Eval.harness.warmup=1", "-o", "Eval.harness.rounds=1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "bbox_ap50" in result.output


def test_eval_harness_scores_an_export_with_nms_inside_as_the_one_without(trained):
    """The NMS-inside export's outputs are data-sized ([N, 6] rows and per-image counts): the harness
    and the metric must take them as they come, and score the same boxes as NMS after the model."""
    reports = {}
    for name, nms in (("model", "false"), ("model_nms", "true")):
        out = trained / f"eval_{name}"
        result = _invoke(
            "eval", "-m", trained / name, "-c", trained / "det.yml", "--output-dir", out,
            "-o", f"Export.nms={nms}", "-o", "PostProcess.score_threshold=0.0", "-o", "Eval.harness.threads=1", "-o", "Eval.harness.cold_start=false",
            "-o", "Eval.harness.repeats=3", "-o", "Eval.harness.warmup=1", "-o", "Eval.harness.rounds=1",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        (report,) = out.glob("runs/*/report.json")
        metrics = json.loads(report.read_text())["metrics"]
        reports[name] = {k: v for k, v in metrics.items() if k.startswith(("ap_", "bbox_")) or k == "error_rate"}
    assert reports["model_nms"] == reports["model"] and reports["model"]["error_rate"] == 0


def test_export_nms_must_be_true_or_false(trained, tmp_path):
    result = _invoke(
        "export", "-w", trained / "run" / "best", "-o", tmp_path / "m", "-c", trained / "det.yml", "-O", "Export.nms=yes!"
    )  # fmt: skip
    assert result.exit_code == 2
    assert "Export.nms is 'yes!'; use true" in result.output and not (tmp_path / "m").exists()


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
