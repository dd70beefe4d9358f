"""The OCR task base: PaddleOCR's config layout checked, its Optimizer spelling, label files and data
operators (through ocr.rec, the smallest concrete task)."""

import copy
from pathlib import Path

import numpy as np
import pytest
from _ocr_lines import rec_config, write_lines

import paddlectl.framework as paddle
import paddlectl.ocr
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.optimizer.clip import ClipGradByGlobalNorm
from paddlectl.framework.optimizer.regularizer import L2Decay
from paddlectl.framework.vision.image_io import read_image
from paddlectl.ocr.rec.task import RecTask
from paddlectl.ocr.task_base import build_schedule


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    root = tmp_path_factory.mktemp("lines")
    return root, write_lines(root, n=6)


@pytest.fixture
def config(lines, tmp_path):
    return rec_config(*lines, tmp_path / "out")


def _lrs(schedule, steps):
    values = []
    for _ in range(steps):
        values.append(schedule())
        schedule.step()
    return values


def test_cosine_with_warmup_ramps_then_decays_per_step():
    lrs = _lrs(build_schedule({"name": "Cosine", "learning_rate": 0.1, "warmup_epoch": 1}, 3, 4), 12)
    assert lrs[:4] == pytest.approx([0.0, 0.025, 0.05, 0.075])
    assert lrs[4] == pytest.approx(0.1) and lrs[-1] < 0.01
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:], strict=False))


def test_piecewise_and_linear_and_const():
    lrs = _lrs(build_schedule({"name": "Piecewise", "decay_epochs": [1], "values": [0.1, 0.01]}, 2, 3), 6)
    assert lrs == pytest.approx([0.1] * 3 + [0.01] * 3)
    lrs = _lrs(build_schedule({"name": "Linear", "learning_rate": 0.1, "end_lr": 0.0}, 1, 4), 4)
    assert lrs == pytest.approx([0.1, 0.075, 0.05, 0.025])
    assert build_schedule({"learning_rate": 0.1}, 1, 4) is None
    with pytest.raises(ConfigError, match="decay_epochs"):
        build_schedule({"name": "Piecewise", "decay_epochs": [1], "values": [0.1]}, 2, 3)


def test_optimizer_in_paddleocr_spelling(config):
    config["Optimizer"] = {
        "name": "Adam", "beta1": 0.8, "clip_norm": 5,
        "lr": {"name": "Cosine", "learning_rate": 0.01}, "regularizer": {"name": "L2", "factor": 3e-5},
    }  # fmt: skip
    task = RecTask()
    optimizer, scheduler = task.build_optimizer(config, task.build_model(config), steps_per_epoch=10)
    assert isinstance(optimizer.regularization, L2Decay) and optimizer.regularization.coeff == pytest.approx(3e-5)
    assert isinstance(optimizer._grad_clip, ClipGradByGlobalNorm)
    assert scheduler() == pytest.approx(0.01) and task.scheduler_interval(config) == "step"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("Architecture", "model_type"), "det", "trains model_type 'rec'"),
        (("Architecture", "Backbon"), {}, "did you mean 'Backbone'"),
        (("Architecture", "Backbone", "name"), "ResNet31", "did you mean .SVTRNet"),
        (("Optimizer", "learning_rate"), 0.1, "Optimizer.lr.learning_rate"),
        (("Optimizer", "lr", "name"), "Cosin", "choose from"),
        (("Optimizer", "regularizer"), {"name": "L3", "factor": 1}, "choose L2 or L1"),
        (("Train", "loader", "batch_size"), 8, "did you mean 'batch_size_per_card'"),
        (("Metric", "main_indicator"), "accuracy", "main_indicator"),
        (("PostProcess", "character_dict"), "x", "character_dict_path"),
        (("Eval", "dataset", "transforms"), [{"DecodeImage": {}}], "no RecResizeImg"),
        (("Train", "dataset", "transforms"), [{"RecResize": {}}], "RecResizeImg"),
    ],
)
def test_config_mistakes_are_named(config, path, value, message):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=message):
        RecTask().check_config(config)


def test_loader_options_in_paddleocr_spelling(config):
    assert RecTask().build_loader_options(config, "train") == {
        "batch_size": 8, "shuffle": False, "drop_last": False, "num_workers": 0,
    }  # fmt: skip


def test_bad_label_lines_name_file_and_line(lines, config):
    root, label = lines
    task = RecTask()
    for text, message in [
        ("img/0.png\tabc\nno tab here\n", "bad.txt:2: expected 'image"),
        ("img/0.png\tabc\nimg/1.png\t  \n", "bad.txt:2: the transcription is empty"),
        ("img/0.png\tabc\n\nimg/99.png\tabc\n", "bad.txt:3: image .* does not exist"),
    ]:
        (root / "bad.txt").write_text(text, encoding="utf-8")
        config["Train"]["dataset"]["label_file_list"] = [str(root / "bad.txt")]
        with pytest.raises(DataError, match=message):
            task.build_datasets(config)
    config["Train"]["dataset"]["label_file_list"] = [str(root / "missing.txt")]
    with pytest.raises(DataError, match="missing.txt' does not exist"):
        task.build_datasets(config)


def test_dropped_samples_are_replaced_and_all_dropped_is_an_error(lines, config):
    root, _ = lines
    (root / "long.txt").write_text("img/0.png\tabcabcabcabc\nimg/1.png\tcab\n", encoding="utf-8")
    config["Train"]["dataset"]["label_file_list"] = [str(root / "long.txt")]
    train, _ = RecTask().build_datasets(config)
    image, label = train[0]  # longer than max_text_length 8: the next line takes its place
    assert image.shape == (3, 32, 96) and image.dtype == np.float32 and -1 <= image.min() <= image.max() <= 1
    assert label.tolist() == [3, 1, 2, 0, 0, 0, 0, 0]
    (root / "long.txt").write_text("img/0.png\tabcabcabcabc\n", encoding="utf-8")
    train, _ = RecTask().build_datasets(config)
    with pytest.raises(DataError, match="every sample was dropped"):
        train[0]


def test_eval_samples_and_serving_steps(lines, config):
    task = RecTask()
    raw, label = next(iter(task.eval_samples(config)))
    assert raw.endswith("img/0.png") and label.tolist()[:3] == [1, 2, 3]
    pre = task.preprocess_config(config)
    assert [next(iter(s)) for s in pre["transforms"]] == ["DecodeImage", "RecResizeImg"]
    assert pre["image_shape"] == [3, 32, 96] and pre["mean"] == pre["std"] == [0.5] * 3
    bgr = read_image(raw, "RGB")[:, :, ::-1]  # an array is in the model's channel order, as cv2 gives it
    (batch,) = task.preprocess(pre, [raw, bgr])
    train, _ = task.build_datasets(config)
    np.testing.assert_array_equal(batch[0], train[0][0])  # serving prepares a line as training did
    np.testing.assert_array_equal(batch[1], train[0][0])


def test_config_is_not_mutated_by_checks(config):
    before = copy.deepcopy(config)
    RecTask().check_config(config)
    assert config == before


@pytest.mark.parametrize("name", ["rec_mv3_bilstm_ctc", "rec_mv3_none_none_ctc", "rec_svtr_tiny_ctc", "cls_mv3"])
def test_shipped_configs_build_and_serve_their_input_size(name, lines):
    from paddlectl.framework.config import load_config
    from paddlectl.ocr.cls.task import ClsTask

    root, label = lines
    path = Path(paddlectl.ocr.__file__).parent / "configs"
    overrides = [
        f"{s}.dataset.{k}={v}"
        for s in ("Train", "Eval")
        for k, v in (("data_dir", root), ("label_file_list", [str(label)]))
    ]
    if name.startswith("rec"):
        overrides.append(f"PostProcess.character_dict_path={root / 'dict.txt'}")
    config = load_config(path / f"{name}.yml", overrides)
    task = RecTask() if name.startswith("rec") else ClsTask()
    task.check_config(config)
    model = task.build_model(config)
    model.eval()
    (batch,) = task.preprocess(task.preprocess_config(config), [str(root / "img" / "0.png")])
    out = model(paddle.to_tensor(batch))
    assert out.shape[0] == 1 and out.shape[-1] == (8 if name.startswith("rec") else 2)  # blank + 6 + space
