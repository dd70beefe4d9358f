"""Training a tiny CRNN, a tiny SVTR and the shipped Rosetta config for a few steps lowers the CTC loss;
model shapes and the export-time checks of the recogniser."""

from importlib.resources import files

import numpy as np
import pytest
import yaml
from _ocr_lines import few_step_losses, rec_config, write_lines

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.ocr.rec.svtr import local_mask
from paddlectl.ocr.rec.task import RecTask


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    root = tmp_path_factory.mktemp("rec_lines")
    return root, write_lines(root, n=8)


def _losses(config: dict, steps: int) -> list[float]:
    """Adam steps on the first batch of the training set; the loss of each step."""
    paddle.seed(0)
    task = RecTask()
    task.check_config(config)
    return few_step_losses(task, config, steps)


@pytest.mark.parametrize("backbone", ["MobileNetV3", "SVTRNet"])
def test_a_few_steps_lower_the_ctc_loss(lines, tmp_path, backbone):
    losses = _losses(rec_config(*lines, tmp_path, backbone=backbone), steps=6)
    assert all(np.isfinite(losses))
    assert np.mean(losses[-2:]) < 0.7 * losses[0], losses


def test_the_shipped_rosetta_config_learns_at_its_own_learning_rate(lines, tmp_path):
    """README's example: MobileNetV3 straight into the CTC head at Adam 0.01, high enough to diverge
    if the parts did not keep it stable."""
    shipped = yaml.safe_load((files("paddlectl.ocr") / "configs" / "rec_mv3_none_none_ctc.yml").read_text("utf-8"))
    config = rec_config(*lines, tmp_path)
    config["Architecture"] = shipped["Architecture"]
    config["Optimizer"]["lr"]["learning_rate"] = shipped["Optimizer"]["lr"]["learning_rate"]
    assert config["Architecture"]["Neck"]["encoder_type"] == "reshape"
    losses = _losses(config, steps=6)
    assert all(np.isfinite(losses))
    assert np.mean(losses[-2:]) < 0.7 * losses[0], losses


def test_model_output_is_one_column_per_step_over_the_dictionary(lines, tmp_path):
    config = rec_config(*lines, tmp_path)
    model = RecTask().build_model(config)
    model.eval()
    out = model(paddle.to_tensor(np.zeros((2, 3, 32, 96), "float32")))
    assert list(out.shape) == [2, 24, 7]  # width 96 / 4 columns; blank + 6 characters


def test_local_mixing_sees_only_its_window():
    mask = local_mask(2, 4, (1, 3))[0, 0]  # one row, three columns wide
    assert mask.shape == (8, 8)
    assert np.isfinite(mask[1]).tolist() == [True, True, True, False, False, False, False, False]
    assert np.isfinite(mask[4]).tolist() == [False, False, False, False, True, True, False, False]


def test_svtr_refuses_another_input_size(lines, tmp_path):
    config = rec_config(*lines, tmp_path, backbone="SVTRNet")
    model = RecTask().build_model(config)
    with pytest.raises(ConfigError, match="RecResizeImg.image_shape match Backbone.img_size"):
        model(paddle.to_tensor(np.zeros((1, 3, 32, 128), "float32")))


def test_served_outputs_must_fit_the_dictionary(lines, tmp_path):
    config = rec_config(*lines, tmp_path)
    task = RecTask()
    post = task.postprocess_config(config)
    assert post["character"] == list("abcdef") and post["use_space_char"] is False
    logits = np.zeros((1, 24, 7), "float32")
    logits[0, [0, 1, 2], [1, 2, 3]] = 9.0  # a, b, c
    assert task.postprocess(post, [logits])[0]["label"] == "abc"
    with pytest.raises(DataError, match="gives 8 classes per step, its dictionary has 7"):
        task.postprocess(post, [np.zeros((1, 24, 8), "float32")])


def test_svtr_exports_to_onnx_with_the_eager_numbers(lines, tmp_path):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime runs the exported file")
    from paddlectl.framework.hapi.export import export

    config = rec_config(*lines, tmp_path / "run", backbone="SVTRNet")
    task = RecTask()
    paddle.seed(0)
    model = task.build_model(config)
    paddle.save(model.state_dict(), str(tmp_path / "svtr.pdparams"))
    path = export(task, config, tmp_path / "svtr.pdparams", tmp_path / "svtr", format="onnx").path
    (batch,) = task.preprocess(task.preprocess_config(config), [str(lines[0] / "img" / f"{i}.png") for i in range(4)])
    model.eval()
    expected = model(paddle.to_tensor(batch)).numpy()
    (served,) = ort.InferenceSession(str(path)).run(None, {"x": batch})
    np.testing.assert_allclose(served, expected, rtol=1e-4, atol=1e-4)
