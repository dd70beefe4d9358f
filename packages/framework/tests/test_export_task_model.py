"""hapi.export: trained weights -> a verified inference model carrying its task's processing and config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import paddlectl.framework as paddle
from paddlectl.framework.config import load_config
from paddlectl.framework.errors import CheckpointError, DataError
from paddlectl.framework.hapi.export import export, served_task_name
from paddlectl.framework.hapi.trainer import train
from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import Predictor
from paddlectl.framework.jit.saved_model import read_model_dir
from paddlectl.framework.vision.task import ClsTask

DIGITS = Path(__file__).parents[1] / "src/paddlectl/framework/vision/configs/digits_lenet.yml"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    config = load_config(
        DIGITS,
        [
            f"Global.output_dir={out}",
            "Global.epochs=1",
            "Train.dataset.test_fraction=0.8",
            "Eval.dataset.test_fraction=0.05",
        ],
    )
    train(ClsTask(), config)
    return out, config


def test_export_verifies_and_the_model_serves_without_the_config(trained, tmp_path):
    out, config = trained
    task = ClsTask()
    result = export(task, config, out / "best", tmp_path / "model", verify=True)
    assert [r["output"] for r in result.verification] == ["output_0", "served:output_0"]
    assert all(r["passed"] for r in result.verification)
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["config.yml", "model.json", "model.safetensors"]
    assert load_config(tmp_path / "model" / "config.yml") == config
    saved = read_model_dir(tmp_path / "model")
    assert served_task_name(saved) == "vision.cls"
    samples = list(task.eval_samples(config))[:5]
    pre, post = saved.meta["preprocess"], saved.meta["postprocess"]
    outputs = Predictor(Config(str(tmp_path / "model")), saved).run(task.preprocess(pre, [s for s, _ in samples]))
    assert outputs[0].shape == (5, 10)
    predictions = task.postprocess(post, outputs)
    assert len(predictions[0]["topk"]) == 3
    json.dumps(predictions)  # JSON-able as the protocol promises


def test_export_refuses_missing_or_foreign_weights_and_writes_nothing(trained, tmp_path):
    out, config = trained
    with pytest.raises(CheckpointError, match="do not exist"):
        export(ClsTask(), config, tmp_path / "nowhere", tmp_path / "m1")
    resnet = load_config(DIGITS, ["Architecture={name: ResNet18, num_classes: 10}"])
    with pytest.raises(CheckpointError, match="do not fit|lack"):
        export(ClsTask(), resnet, out / "best", tmp_path / "m2")

    class Other(ClsTask):
        name = "vision.other"

    with pytest.raises(CheckpointError, match="trained for task 'vision.cls'"):
        export(Other(), config, out / "best", tmp_path / "m3")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_export_never_overwrites_a_directory_that_is_not_a_model(trained, tmp_path):
    out, config = trained
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("keep me")
    with pytest.raises(DataError, match="is not an exported model"):
        export(ClsTask(), config, out / "best", tmp_path / "docs")
    assert (tmp_path / "docs" / "notes.txt").read_text() == "keep me"


def test_a_plain_jit_model_has_no_task(tmp_path):
    import paddlectl.framework as paddle
    from paddlectl.framework.static import InputSpec

    paddle.jit.save(paddle.nn.Linear(3, 2), str(tmp_path / "plain"), input_spec=[InputSpec([None, 3], "float32", "x")])
    with pytest.raises(CheckpointError, match="paddlectl export"):
        served_task_name(read_model_dir(tmp_path / "plain"))


def test_onnx_export_carries_the_processing_and_runs_in_onnxruntime(trained, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    out, config = trained
    task = ClsTask()
    result = export(task, config, out / "best", tmp_path / "model", verify=True, format="onnx")
    assert result.path == tmp_path / "model.onnx" and sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]
    props = {
        p.key: json.loads(p.value)
        for p in onnx.load(str(result.path)).metadata_props
        if p.key in ("preprocess", "postprocess")
    }
    assert props["preprocess"] == task.preprocess_config(config)
    (batch,) = task.preprocess(props["preprocess"], [s for s, _ in list(task.eval_samples(config))[:3]])
    onnx_out = ort.InferenceSession(str(result.path)).run(None, {"image": batch})[0]
    eager = task.build_model(config)
    eager.set_state_dict(paddle.load(str(out / "best" / "model.pdparams")))
    eager.eval()
    with paddle.no_grad():
        expected = eager(paddle.to_tensor(batch)).numpy()
    np.testing.assert_allclose(onnx_out, expected, atol=1e-4, rtol=1e-4)
