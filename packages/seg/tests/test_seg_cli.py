"""``paddlectl seg synth`` -> ``train`` -> ``export`` -> ``eval`` -> ``predict`` / ``seg predict``, end to end."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from typer.testing import CliRunner

from paddlectl.cli.app import app

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
cli = CliRunner()


def _invoke(*args):
    return cli.invoke(app, [str(a) for a in args])


def _config(root: Path) -> dict:
    config = yaml.safe_load((CONFIGS / "unet_scenes.yml").read_text(encoding="utf-8"))
    config["Global"].update(epochs=4, output_dir=str(root / "run"), log_interval=1)
    config["Architecture"].update(base=4, depth=2)
    config["Optimizer"]["lr"].update(learning_rate=0.01, warmup_iters=0)
    config["Train"]["dataset"].update(dataset_root=str(root / "train"), transforms=[{"Normalize": {}}])
    config["Train"]["loader"] = {"batch_size": 4, "shuffle": False}
    config["Eval"]["dataset"]["dataset_root"] = str(root / "val")
    config["Eval"]["test_config"] = {"is_slide": True, "crop_size": [48, 48], "stride": [16, 16]}
    config["Export"]["input_shape"] = [3, 64, 64]
    return config


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("seg_cli")
    for split, n, seed in (("train", 8, 0), ("val", 4, 1)):
        result = _invoke("seg", "synth", "--out", root / split, "--n", n, "--seed", seed, "--size", 64)
        assert result.exit_code == 0, result.output
    (root / "seg.yml").write_text(yaml.safe_dump(_config(root)), encoding="utf-8")
    result = _invoke("train", "-c", root / "seg.yml", "-q")
    assert result.exit_code == 0, result.output
    result = _invoke("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    assert result.exit_code == 0, result.output
    return root


def test_synth_writes_paddleseg_file_lists_and_palette_labels(trained):
    lines = (trained / "train" / "file_list.txt").read_text().splitlines()
    assert len(lines) == 8 and lines[0] == "images/scene_000000.png labels/scene_000000.png"
    label = Image.open(trained / "train" / "labels" / "scene_000000.png")
    assert label.mode == "P" and set(np.unique(np.asarray(label))) <= set(range(6))
    assert (trained / "train" / "labels.txt").read_text().split() == ["background", "digit", "letter", "circle",
                                                                     "square", "triangle"]  # fmt: skip


def test_the_training_loss_falls_and_eval_reports_paddleseg_metrics(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    assert len(losses) == 8 and np.mean(losses[-2:]) < np.mean(losses[:2])
    evaluation = [r for r in records if r["kind"] == "eval"][-1]
    assert {"miou", "acc", "kappa", "mdice", "iou_background", "iou_triangle"} <= set(evaluation)


def test_eval_measures_the_exported_model_with_the_same_metrics(trained):
    quick = ["threads=1", "cold_start=false", "repeats=3", "warmup=1", "rounds=1"]
    overrides = [arg for setting in quick for arg in ("-o", f"Eval.harness.{setting}")]
    result = _invoke(
        "eval", "-m", trained / "model", "-c", trained / "seg.yml", "--output-dir", trained / "eval", *overrides
    )
    assert result.exit_code == 0, result.output
    assert "miou" in result.output and "kappa" in result.output


def test_predict_gives_label_maps_and_seg_predict_writes_the_pngs(trained, tmp_path):
    image = trained / "val" / "images" / "scene_000000.png"
    result = _invoke("predict", "-m", trained / "model", "-i", image, "--json", tmp_path / "p.json")
    assert result.exit_code == 0, result.output
    (prediction,) = json.loads((tmp_path / "p.json").read_text())["predictions"]
    assert np.asarray(prediction["pred"]).shape == (64, 64)
    assert sum(c["area"] for c in prediction["classes"]) == pytest.approx(1.0)
    big = tmp_path / "big.png"
    Image.open(image).resize((100, 80)).save(big)
    result = _invoke("seg", "predict", "-m", trained / "model", "-i", big, "--out", tmp_path / "vis")
    assert result.exit_code == 0, result.output
    (record,) = json.loads((tmp_path / "vis" / "predictions.json").read_text())
    label, pseudo = Image.open(record["label_map"]), Image.open(record["pseudo_color"])
    assert label.mode == "L" and pseudo.mode == "P" and label.size == pseudo.size == (100, 80)
    assert np.array_equal(np.asarray(label), np.asarray(pseudo))
    assert Image.open(record["overlay"]).size == (100, 80)


def test_labels_outside_the_classes_stop_train_with_the_file_named(trained, tmp_path):
    bad = trained / "train" / "labels" / "scene_000003.png"
    original = bad.read_bytes()
    try:
        Image.fromarray(np.full((64, 64), 9, np.uint8), "L").save(bad)
        config = _config(trained)
        config["Global"]["output_dir"] = str(tmp_path / "run")
        (tmp_path / "bad.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        result = _invoke("train", "-c", tmp_path / "bad.yml", "-q")
    finally:
        bad.write_bytes(original)
    assert result.exit_code == 2
    assert "scene_000003.png" in result.output and "file_list.txt:4" in result.output
    assert not (tmp_path / "run").exists()


def test_seg_predict_refuses_a_missing_image(trained, tmp_path):
    result = _invoke("seg", "predict", "-m", trained / "model", "-i", tmp_path / "nope.png", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "does not exist" in result.output
