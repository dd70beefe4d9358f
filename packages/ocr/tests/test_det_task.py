"""``ocr.det`` as a task: a tiny DB learns on rendered pages, and ``paddlectl train / export / predict /
eval`` run on a det config end to end; config mistakes are one-line errors."""

from __future__ import annotations

import copy
import json
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
import yaml

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.ops.random import seed
from paddlectl.ocr.det.task import DetTask
from paddlectl.ocr.synth.dataset import generate
from paddlectl.ocr.synth.run import make_plan

CONFIG = files("paddlectl.ocr") / "configs" / "det_mv3_db.yml"


def _op(config: dict, split: str, name: str) -> dict:
    """The arguments of the data operator ``name`` in ``split``'s transforms."""
    return next(step[name] for step in config[split]["dataset"]["transforms"] if name in step)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[dict, Path]:
    """The shipped config shrunk to seconds: 4 rendered train pages, 2 held out, 128 px crops, a 0.35x
    backbone and a 32-channel neck, evaluated at 160 px."""
    root = tmp_path_factory.mktemp("det")
    plan = make_plan(n=6, fonts=[], val_fonts=[], charset=["latin"], kinds=("det",), seed=0, val_fraction=0.34,
                     max_chars=12)  # fmt: skip
    generate(plan, root / "synth", workers=1)
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    config["Global"].update(epochs=1, output_dir=str(root / "run"), log_interval=1)
    config["Architecture"]["Backbone"]["scale"] = 0.35
    config["Architecture"]["Neck"]["out_channels"] = 32
    for split, name in (("Train", "label.txt"), ("Eval", "val.txt")):
        config[split]["dataset"].update(
            data_dir=str(root / "synth/det"), label_file_list=[str(root / "synth/det" / name)]
        )
        config[split]["loader"].update(num_workers=0, batch_size_per_card=2)
    _op(config, "Train", "EastRandomCropData")["size"] = [128, 128]
    _op(config, "Eval", "DetResizeForTest")["limit_side_len"] = 160
    _op(config, "Eval", "Pad")["size"] = [160, 160]
    config["Eval"]["harness"] = {"batch_sizes": [1], "warmup": 0, "repeats": 2, "rounds": 1, "cold_start": False}
    path = root / "tiny.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return config, path


def test_training_a_tiny_db_lowers_the_loss(tiny):
    config, _ = tiny
    task = DetTask()
    seed(0)
    model = task.build_model(config)
    train_set, _ = task.build_datasets(config)
    batch = [train_set[i] for i in range(2)]
    images = paddle.to_tensor(np.stack([b[0] for b in batch]))
    labels = paddle.to_tensor(np.stack([b[1] for b in batch]))
    loss_fn = task.build_loss(config)
    optimizer = paddle.optimizer.Adam(learning_rate=0.003, parameters=model.parameters())
    losses = []
    for _ in range(6):
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0], losses


def test_train_export_predict_eval_from_the_command_line(tiny, tmp_path):
    runner_module = pytest.importorskip("typer.testing", reason="the CLI test drives paddlectl through typer")
    cli = pytest.importorskip("paddlectl.cli.app", reason="paddlectl train/export/eval live in paddlectl-cli")
    pytest.importorskip("paddlectl.eval_harness", reason="paddlectl eval lives in paddlectl-eval-harness")
    config, path = tiny
    runner, run = runner_module.CliRunner(), Path(config["Global"]["output_dir"])
    result = runner.invoke(cli.app, ["train", "--quiet", "-c", str(path)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in records].count("train") == 2 and "hmean" in records[-1]

    out = tmp_path / "model"
    result = runner.invoke(
        cli.app, ["export", "-c", str(path), "--weights", str(run / "latest"), "-o", str(out), "--verify"]
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "model.json").read_text())
    steps = {next(iter(s)): next(iter(s.values())) for s in meta["preprocess"]["transforms"]}
    assert steps["DetResizeForTest"] == {"limit_side_len": 160, "limit_type": "max"}
    assert steps["NormalizeImage"]["mean"] == [0.485, 0.456, 0.406] and "DetLabelEncode" not in steps
    assert meta["postprocess"]["box_thresh"] == 0.6 and meta["postprocess"]["unclip_ratio"] == 1.5

    onnx_file = tmp_path / "model.onnx"
    result = runner.invoke(
        cli.app, ["export", "-c", str(path), "--weights", str(run / "latest"), "-o", str(onnx_file), "--format", "onnx"]
    )
    assert result.exit_code == 0, result.output
    _onnx_matches_the_native_model(onnx_file, out)

    image = Path(config["Eval"]["dataset"]["data_dir"]) / "images" / "000005.png"
    result = runner.invoke(cli.app, ["predict", "-m", str(out), "-i", str(image), "--json", str(tmp_path / "p.json")])
    assert result.exit_code == 0, result.output
    (prediction,) = json.loads((tmp_path / "p.json").read_text())["predictions"]
    assert set(prediction) >= {"dt_polys", "dt_scores"}

    result = runner.invoke(cli.app, ["eval", "-m", str(out), "-c", str(path), "--output-dir", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    report = next((tmp_path / "eval").rglob("report.json"))
    metrics = json.loads(report.read_text())["metrics"]
    assert {"precision", "recall", "hmean"} <= set(metrics)


def _onnx_matches_the_native_model(onnx_file: Path, model_dir: Path) -> None:
    """onnxruntime on the ONNX export and the framework's predictor on the native one agree."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the ONNX export")
    from paddlectl.framework.inference import Config, create_predictor

    rng = np.random.default_rng(0)
    image = rng.normal(size=(2, 3, 160, 160)).astype("float32")
    shape = np.array([[100, 120, 1.0, 1.0], [300, 500, 0.32, 0.32]], "float32")
    expected = create_predictor(Config(str(model_dir))).run([image, shape])
    got = ort.InferenceSession(str(onnx_file)).run(None, {"image": image, "shape": shape})
    np.testing.assert_allclose(got[0], expected[0], atol=1e-5)
    np.testing.assert_array_equal(got[1], shape)


def _edited(config: dict, edit) -> dict:
    config = copy.deepcopy(config)
    edit(config)
    return config


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda c: c["Eval"]["dataset"]["transforms"].pop(4), "then Pad"),
        (lambda c: _op(c, "Eval", "DetResizeForTest").pop("limit_type"), "limit_type: min"),
        (lambda c: _op(c, "Eval", "Pad").update(size=[128, 128]), "more than Pad.size"),
        (lambda c: _op(c, "Eval", "Pad").update(size=[170, 170]), "multiples of 32"),
        (lambda c: _op(c, "Train", "EastRandomCropData").update(size=[100, 128]), "multiples of 32"),
        (lambda c: _op(c, "Train", "IaaAugment")["augmenter_args"].append({"type": "Blur"}), "IaaAugment"),
        (lambda c: c["Train"]["dataset"]["transforms"][-1].update(KeepKeys={"keep_keys": ["image", "shape", "polys", "ignore_tags"]}), "threshold/shrink maps"),
        (lambda c: c["PostProcess"].update(box_tresh=0.5), "did you mean 'box_thresh'"),
        (lambda c: c["Loss"].update(main_loss_type="Focal"), "main_loss_type"),
        (lambda c: c["Architecture"].update(algorithm="EAST"), "trains DB"),
    ],
)  # fmt: skip
def test_config_mistakes_are_config_errors(tiny, edit, match):
    with pytest.raises(ConfigError, match=match):
        DetTask().check_config(_edited(tiny[0], edit))


def test_malformed_label_is_one_line_exit_2_and_nothing_written(tiny, tmp_path):
    runner_module = pytest.importorskip("typer.testing", reason="the CLI test drives paddlectl through typer")
    cli = pytest.importorskip("paddlectl.cli.app", reason="paddlectl train lives in paddlectl-cli")
    config, _ = tiny
    source = Path(config["Train"]["dataset"]["label_file_list"][0])
    lines = source.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].rstrip("]")  # the JSON list is never closed
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    edited = copy.deepcopy(config)
    edited["Global"]["output_dir"] = str(tmp_path / "run")
    edited["Train"]["dataset"]["label_file_list"] = [str(bad)]
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(edited), encoding="utf-8")
    result = runner_module.CliRunner().invoke(cli.app, ["train", "--quiet", "-c", str(path)])
    assert result.exit_code == 2, result.output
    message = [line for line in result.output.splitlines() if line.strip()]
    assert len(message) == 1 and f"{bad}:2: the label is not valid JSON" in message[0], result.output
    assert not (tmp_path / "run").exists()


def test_postprocess_maps_boxes_to_the_source_image_and_refuses_other_outputs():
    prob = np.zeros((1, 1, 64, 96), np.float32)
    prob[0, 0, 10:20, 8:40] = 0.9  # a text blob in the resized image (48 x 96 of the padded 64 x 96)
    shape = np.array([[96, 192, 0.5, 0.5]], np.float32)  # the source was twice as large
    post = {"task": "ocr.det", "name": "DBPostProcess", "box_thresh": 0.5, "unclip_ratio": 1.5}
    (result,) = DetTask().postprocess(post, [prob, shape])
    (box,) = np.array(result["dt_polys"])
    # By hand: the region (x 8..40, y 10..20 after the 2x2 dilation) grows by 320 * 1.5 / 84 = 5.7 px
    # (unclip), then doubles into the source image: x 4.6..91.4, y 8.6..51.4.
    np.testing.assert_allclose([box[:, 0].min(), box[:, 0].max()], [4.6, 91.4], atol=3)
    np.testing.assert_allclose([box[:, 1].min(), box[:, 1].max()], [8.6, 51.4], atol=3)
    # "fast" score: the mean inside the 33 x 11 rectangle of the dilated region, 320 pixels of it at 0.9.
    assert result["dt_scores"][0] == pytest.approx(0.9 * 320 / 363)
    with pytest.raises(DataError, match="probability maps"):
        DetTask().postprocess(post, [prob])
