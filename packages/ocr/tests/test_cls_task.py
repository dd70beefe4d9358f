"""ocr.cls: upright lines make both direction classes, the classifier trains, serving names labels."""

import numpy as np
import pytest
from _ocr_lines import cls_config, few_step_losses, write_lines

import paddlectl.framework as paddle
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.vision.image_io import read_image
from paddlectl.ocr.cls.task import ClsTask


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    root = tmp_path_factory.mktemp("cls_lines")
    return root, write_lines(root, n=4)


def test_each_line_is_a_0_and_a_180_sample(lines, tmp_path):
    config = cls_config(*lines, tmp_path)
    task = ClsTask()
    train, _ = task.build_datasets(config)
    assert len(train) == 8
    (upright, up_label), (turned, turned_label) = train[0], train[1]
    assert (int(up_label), int(turned_label)) == (0, 1)
    assert upright.shape == turned.shape == (3, 32, 96)
    samples = list(task.eval_samples(config))
    assert str(samples[0][0]).endswith("img/0.png")  # served from its file
    # the turned line is served as an array in the model's channel order (BGR)
    np.testing.assert_array_equal(samples[1][0], read_image(samples[0][0], "RGB")[::-1, ::-1, ::-1])
    (batch,) = task.preprocess(task.preprocess_config(config), [samples[1][0]])
    np.testing.assert_array_equal(batch[0], turned)  # serving prepares the turned line as training did


def test_a_few_steps_lower_the_classifier_loss(lines, tmp_path):
    paddle.seed(0)
    config = cls_config(*lines, tmp_path)
    task = ClsTask()
    task.check_config(config)
    losses = few_step_losses(task, config, 5)
    assert losses[-1] < losses[0], losses


def test_postprocess_names_the_direction(lines, tmp_path):
    task = ClsTask()
    post = task.postprocess_config(cls_config(*lines, tmp_path))
    (pred,) = task.postprocess(post, [np.array([[0.0, 2.0]], "float32")])
    assert pred["label"] == "180" and pred["score"] == pytest.approx(1 / (1 + np.exp(-2.0)))
    with pytest.raises(DataError, match="gives 3 classes, its label_list names 2"):
        task.postprocess(post, [np.zeros((1, 3), "float32")])


def test_class_count_and_dataset_order_are_checked(lines, tmp_path):
    config = cls_config(*lines, tmp_path)
    config["Architecture"]["Head"]["class_dim"] = 3
    with pytest.raises(ConfigError, match="class_dim is 3 but PostProcess.label_list has 2"):
        ClsTask().check_config(config)
    config = cls_config(*lines, tmp_path)
    transforms = config["Train"]["dataset"]["transforms"]
    transforms[0], transforms[1] = transforms[1], transforms[0]
    with pytest.raises(ConfigError, match="RotateToLabel in its transforms, after DecodeImage"):
        ClsTask().build_datasets(config)
