"""`paddlectl export` and `paddlectl predict` end to end, with their bad-input errors (exit 2, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from paddlectl.cli.app import app

runner = CliRunner()
DIGITS = str(files("paddlectl.framework.vision") / "configs" / "digits_lenet.yml")


def _one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A 2-epoch digits run (on a quarter of the training split) exported with --verify."""
    root = tmp_path_factory.mktemp("e2e")
    run = root / "run"
    result = runner.invoke(
        app,
        ["train", "--quiet", "-c", DIGITS, "-o", f"Global.output_dir={run}", "-o", "Global.epochs=2",
         "-o", "Train.dataset.test_fraction=0.75", "-o", "Eval.dataset.test_fraction=0.75"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    model = root / "model"
    result = runner.invoke(app, ["export", "--weights", str(run / "best"), "-o", str(model), "--verify", "--print-ir"])
    assert result.exit_code == 0, result.output
    return run, model, result.output


def _digit_files(folder: Path, count: int = 4) -> list[tuple[Path, int]]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(1797 - count, 1797):
        path = folder / f"digit_{i}.png"
        Image.fromarray(np.round(digits.images[i] * 255 / 16).astype(np.uint8)).save(path)
        out.append((path, int(digits.target[i])))
    return out


def test_export_prints_specs_verification_and_ir(exported):
    run, model, output = exported
    assert "verified (output_0, served:output_0)" in output
    assert "image" in output and "output_0" in output
    assert "conv2d" in output  # the program text from --print-ir
    assert sorted(p.name for p in model.iterdir()) == ["config.yml", "model.json", "model.safetensors"]
    meta = json.loads((model / "model.json").read_text())
    assert meta["preprocess"]["task"] == "vision.cls" and meta["postprocess"]["label_list"][3] == "3"


def test_predict_needs_no_config_and_writes_json(exported, tmp_path):
    _, model, _ = exported
    samples = _digit_files(tmp_path / "in")
    out = tmp_path / "pred.json"
    result = runner.invoke(app, ["predict", "--model", str(model), "--input", str(tmp_path / "in"), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "vision.cls predictions (4)" in result.output
    document = json.loads(out.read_text())
    assert [p["input"] for p in document["predictions"]] == [str(p) for p, _ in samples]
    hits = sum(p["class_id"] == label for p, (_, label) in zip(document["predictions"], samples, strict=True))
    assert hits >= 3  # a 2-epoch model on held-out scans
    assert all(0.0 <= p["score"] <= 1.0 and len(p["topk"]) == 3 for p in document["predictions"])


def test_predict_in_a_real_process(exported, tmp_path):
    _, model, _ = exported
    (path, _), *_ = _digit_files(tmp_path / "in", 1)
    proc = subprocess.run(
        [sys.executable, "-m", "paddlectl.cli", "predict", "-m", str(model), "-i", str(path), "--json", str(tmp_path / "p.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "p.json").read_text())["predictions"][0]["input"] == str(path)


def test_predict_bad_inputs_exit_2_without_json(exported, tmp_path):
    _, model, _ = exported
    (good, _), *_ = _digit_files(tmp_path / "in", 1)
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    out = tmp_path / "pred.json"
    args = ["predict", "--model", str(model), "--json", str(out)]
    _one_line_error(
        runner.invoke(app, [*args, "-i", str(good), "-i", str(tmp_path / "broken.png")]),
        "broken.png",
        "cannot read image",
    )
    _one_line_error(runner.invoke(app, [*args, "-i", str(tmp_path / "nope.png")]), "nope.png", "does not exist")
    _one_line_error(
        runner.invoke(app, ["predict", "--model", str(tmp_path), "-i", str(good), "--json", str(out)]),
        "not a saved model directory",
    )
    assert not out.exists()


def test_threshold_is_refused_for_a_task_that_keeps_nothing_by_score(exported, tmp_path):
    _, model, _ = exported
    (good, _), *_ = _digit_files(tmp_path / "in", 1)
    out = tmp_path / "pred.json"
    args = ["predict", "--model", str(model), "-i", str(good), "--json", str(out)]
    _one_line_error(runner.invoke(app, [*args, "--threshold", "0.5"]), "--threshold is for detectors", "vision.")
    assert runner.invoke(app, [*args, "--threshold", "1.5"]).exit_code == 2
    assert not out.exists()


def test_pictures_of_inputs_sharing_a_name_do_not_collide():
    from paddlectl.cli.predict import unique_stems

    inputs = [Path("a/x.png"), Path("b/x.png"), Path("a/y.png"), Path("c/x.jpg")]
    assert list(unique_stems(inputs).values()) == ["x", "x_2", "y", "x_3"]


def test_model_of_a_task_that_is_not_installed(exported, tmp_path, monkeypatch):
    _, model, _ = exported
    import shutil

    from paddlectl.cli import plugins

    # as where paddlectl-speech is not installed (the developers' environment has every suite)
    every = plugins.tasks()
    monkeypatch.setattr(plugins, "tasks", lambda: {k: v for k, v in every.items() if not k.startswith("speech.")})
    monkeypatch.setattr(plugins, "installed_paddlectl", lambda: {})
    foreign = tmp_path / "foreign"
    shutil.copytree(model, foreign)
    meta = json.loads((foreign / "model.json").read_text())
    meta["preprocess"]["task"] = "speech.asr"
    (foreign / "model.json").write_text(json.dumps(meta))
    (good, _), *_ = _digit_files(tmp_path / "in", 1)
    result = runner.invoke(
        app, ["predict", "--model", str(foreign), "-i", str(good), "--json", str(tmp_path / "p.json")]
    )
    _one_line_error(result, "speech.asr", "paddlectl-speech")


def test_export_bad_input_exit_2_and_nothing_written(exported, tmp_path):
    run, _, _ = exported
    out = tmp_path / "m"
    _one_line_error(
        runner.invoke(app, ["export", "--weights", str(tmp_path / "none"), "-o", str(out)]), "does not exist"
    )
    _one_line_error(
        runner.invoke(app, ["export", "-c", DIGITS, "--weights", str(tmp_path / "none"), "-o", str(out)]),
        "weights",
        "do not exist",
    )
    _one_line_error(
        runner.invoke(
            app, ["export", "--weights", str(run / "best"), "-o", str(out), "-O", "Architecture.name=ResNet18"]
        ),
        "another architecture",
    )
    _one_line_error(
        runner.invoke(
            app, ["export", "--weights", str(run / "best"), "-o", str(out), "-O", "Export.input_shap=[1, 28, 28]"]
        ),
        "did you mean 'input_shape'",
    )
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_export_to_onnx_or_say_what_to_install(exported, tmp_path):
    import importlib
    import importlib.util

    run, _, _ = exported
    result = runner.invoke(
        app, ["export", "--weights", str(run / "best"), "-o", str(tmp_path / "lenet"), "--format", "onnx"]
    )
    if importlib.util.find_spec("onnx") is None:
        _one_line_error(result, "pip install 'paddlectl-framework[onnx]'")
        assert list(tmp_path.iterdir()) == []
    else:
        assert result.exit_code == 0, result.output
        assert [p.name for p in tmp_path.iterdir()] == ["lenet.onnx"]
        graph = importlib.import_module("onnx").load(str(tmp_path / "lenet.onnx")).graph
        assert [i.name for i in graph.input] == ["image"] and [o.name for o in graph.output] == ["output_0"]


def test_several_paths_after_one_input_and_directories(exported, tmp_path):
    _, model, _ = exported
    samples = _digit_files(tmp_path / "in", 4)
    (first, _), (second, _), *_ = samples
    folder = tmp_path / "more"
    folder.mkdir()
    for path, _ in samples[2:]:
        path.rename(folder / path.name)
    out = tmp_path / "[b]" / "pred.json"  # brackets are not rich markup here
    result = runner.invoke(
        app, ["predict", "--model", str(model), "--input", str(first), str(second), str(folder), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    inputs = [p["input"] for p in json.loads(out.read_text())["predictions"]]
    assert inputs == [str(first), str(second), *(str(folder / p.name) for p, _ in samples[2:])]
    assert f"predictions:{out}" in "".join(result.output.split())


@pytest.mark.parametrize(
    ("args", "spread"),
    [
        (["-m", "M", "--input", "a", "b", "--json", "j", "c"], ["-m", "M", "--input", "a", "--input", "b", "--json", "j", "c"]),
        (["-i", "a", "-i", "b", "c"], ["-i", "a", "-i", "b", "--input", "c"]),
        (["--input=a", "b", "--batch-size", "2"], ["--input=a", "--input", "b", "--batch-size", "2"]),
        (["-ia", "b", "--", "c"], ["-ia", "--input", "b", "--", "c"]),
        (["--json", "j", "-m", "M"], ["--json", "j", "-m", "M"]),
    ],
)  # fmt: skip
def test_spread_inputs(args, spread):
    from paddlectl.cli.predict import spread_inputs

    assert spread_inputs(args) == spread


def test_predict_runs_an_exported_onnx_file(exported, tmp_path):
    onnx = pytest.importorskip("onnx")
    run, model, _ = exported
    result = runner.invoke(app, ["export", "-w", str(run / "best"), "-o", str(tmp_path / "lenet"), "--format", "onnx"])
    assert result.exit_code == 0, result.output
    _digit_files(tmp_path / "in", 3)
    predictions = {}
    for name, source in (("native", model), ("onnx", tmp_path / "lenet.onnx")):
        out = tmp_path / f"{name}.json"
        result = runner.invoke(app, ["predict", "-m", str(source), "-i", str(tmp_path / "in"), "--json", str(out)])
        assert result.exit_code == 0, result.output
        predictions[name] = json.loads(out.read_text())["predictions"]
    assert [p["class_id"] for p in predictions["onnx"]] == [p["class_id"] for p in predictions["native"]]
    assert [p["score"] for p in predictions["onnx"]] == pytest.approx([p["score"] for p in predictions["native"]])

    bare = onnx.load(str(tmp_path / "lenet.onnx"))
    del bare.metadata_props[:]
    onnx.save(bare, str(tmp_path / "bare.onnx"))
    result = runner.invoke(app, ["predict", "-m", str(tmp_path / "bare.onnx"), "-i", str(tmp_path / "in")])
    _one_line_error(result, "bare.onnx", "'preprocess'", "paddlectl export --format onnx")


def test_export_takes_a_pdparams_file(exported, tmp_path):
    run, _, _ = exported
    weights = run / "best" / "model.pdparams"
    result = runner.invoke(app, ["export", "-w", str(weights), "-o", str(tmp_path / "beside")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "beside" / "model.json").is_file()

    lone = tmp_path / "lone" / "lenet.pdparams"
    lone.parent.mkdir()
    lone.write_bytes(weights.read_bytes())
    _one_line_error(
        runner.invoke(app, ["export", "-w", str(lone), "-o", str(tmp_path / "m")]), "lenet.pdparams", "-c CONFIG.yml"
    )
    assert not (tmp_path / "m").exists()
    result = runner.invoke(app, ["export", "-c", DIGITS, "-w", str(lone), "-o", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output


def test_a_directory_contributes_its_images_audio_and_arrays(tmp_path):
    from paddlectl.cli.predict import expand_inputs

    for name in ("b.wav", "a.png", "c.flac", "notes.txt", "d.npy"):
        (tmp_path / name).touch()
    assert [p.name for p in expand_inputs([str(tmp_path)])] == ["a.png", "b.wav", "c.flac", "d.npy"]
