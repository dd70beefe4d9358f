"""vision.cls: the reference Task: configs, datasets (digits, image folders, CIFAR binary), pre/post-processing."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from paddlectl.framework.config import load_config
from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.hapi import Task, compute_metrics
from paddlectl.framework.hapi.builders import build_optimizer, instantiate
from paddlectl.framework.vision.models import LeNet
from paddlectl.framework.vision.task import ClsTask

CONFIGS = Path(__file__).parents[1] / "src/paddlectl/framework/vision/configs"
DIGITS = CONFIGS / "digits_lenet.yml"


@pytest.fixture(scope="module")
def task() -> ClsTask:
    return ClsTask()


def test_registered_under_its_entry_point_and_follows_the_protocol(task):
    found = {ep.name: ep for ep in entry_points(group="paddlectl.tasks")}
    assert found["vision.cls"].load() is ClsTask
    assert isinstance(task, Task)
    assert task.name == "vision.cls"


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yml")), ids=lambda p: p.name)
def test_every_shipped_config_is_valid(task, path):
    config = load_config(path)
    task.check_config(config)
    assert config["Global"]["task"] == "vision.cls"
    spec = task.input_spec(config)[0]
    assert spec.shape[0] is None and list(spec.shape[1:]) == config["Export"]["input_shape"]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("Architecture.num_clases=10", "did you mean 'num_classes'"),
        ("Architecture.name=LeNett", "did you mean 'LeNet'"),
        ("Train.loader.batchsize=8", "did you mean 'batch_size'"),
        ("Metric.main_indicator=accuracy", "choose from acc"),
        ("Optimizer.lr.T_mx=3", "did you mean 'T_max'"),
        ("Eval.transforms=[{Resze: {size: 28}}]", "did you mean 'Resize'"),
        ("Export.input_shape=[2, 28, 28]", r"1 \(grey\) or 3 \(RGB\)"),
        ("PostProcess.top_k=3", "did you mean 'topk'"),
    ],
)
def test_config_typos_name_the_nearest_key(task, override, expected):
    config = load_config(DIGITS, [override])
    with pytest.raises(ConfigError, match=expected):
        task.check_config(config)
        task.build_optimizer(config, LeNet(), 10)


def test_digits_split_is_fixed_disjoint_and_complete(task):
    config = load_config(DIGITS)
    train, test = task.build_datasets(config)
    assert (len(train), len(test)) == (1438, 359)
    image, label = train[0]
    assert image.shape == (1, 28, 28) and image.dtype == np.float32 and label.dtype == np.int64
    assert -1.0 <= image.min() and image.max() <= 1.0
    raw_train = {r.tobytes() for r, _ in zip(train.images, range(len(train)), strict=False)}
    overlap = sum(r.tobytes() in raw_train for r in test.images)
    assert overlap < 10  # a few digits are pixel-identical scans; the split itself is disjoint by index
    again = task.build_datasets(config)[1]
    np.testing.assert_array_equal(again.images, test.images)


def test_preprocess_of_eval_samples_equals_the_eval_dataset(task, tmp_path):
    config = load_config(DIGITS)
    _, test = task.build_datasets(config)
    samples = list(task.eval_samples(config))
    assert len(samples) == len(test) and [y for _, y in samples[:5]] == [int(test[i][1][0]) for i in range(5)]
    pre = task.preprocess_config(config)
    (batch,) = task.preprocess(pre, [raw for raw, _ in samples[:4]])
    np.testing.assert_array_equal(batch, np.stack([test[i][0] for i in range(4)]))
    # the same digit saved as a PNG and as .npy gives the same model input
    Image.fromarray(samples[0][0]).save(tmp_path / "d.png")
    np.save(tmp_path / "d.npy", samples[0][0])
    (from_files,) = task.preprocess(pre, [tmp_path / "d.png", str(tmp_path / "d.npy")])
    np.testing.assert_array_equal(from_files, np.stack([batch[0], batch[0]]))


def test_unreadable_and_misshapen_inputs_are_data_errors(task, tmp_path):
    pre = task.preprocess_config(load_config(DIGITS))
    (tmp_path / "bad.png").write_bytes(b"not an image at all")
    with pytest.raises(DataError, match="cannot read image"):
        task.preprocess(pre, [tmp_path / "bad.png"])
    with pytest.raises(DataError, match="does not exist"):
        task.preprocess(pre, [tmp_path / "missing.png"])
    cropped = {**pre, "transforms": [{"ToTensor": {}}]}
    with pytest.raises(DataError, match=r"becomes shape \[1, 8, 8\].*takes \[1, 28, 28\]"):
        task.preprocess(cropped, [np.zeros((8, 8), np.uint8)])


def test_postprocess_gives_topk_labels_and_probabilities(task):
    post = {"task": "vision.cls", "topk": 2, "label_list": ["cat", "dog", "emu"]}
    logits = np.array([[0.0, 2.0, 1.0], [5.0, 0.0, 0.0]], "float32")
    first, second = task.postprocess(post, [logits])
    assert (first["label"], first["class_id"]) == ("dog", 1)
    assert [t["label"] for t in first["topk"]] == ["dog", "emu"]
    expected = np.exp(logits[0]) / np.exp(logits[0]).sum()
    assert first["score"] == pytest.approx(expected[1])
    assert second["label"] == "cat" and second["score"] > 0.98


def test_compute_metrics_uses_the_tasks_metric(task):
    config = load_config(DIGITS)
    outputs = np.eye(10, dtype="float32")[[1, 2, 3, 4]]
    labels = np.array([[1], [2], [0], [4]])
    assert compute_metrics(task, config, [outputs], labels) == {"acc": 0.75}


def _folder(root: Path, classes=("ants", "bees"), per_class=3) -> Path:
    rng = np.random.default_rng(0)
    for c in classes:
        (root / c).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 255, (40, 36, 3), dtype=np.uint8)).save(root / c / f"{i}.png")
    return root


def test_image_folder_config_reads_classes_and_serves_files(task, tmp_path):
    root = _folder(tmp_path / "train")
    overrides = [
        f"Train.dataset.root={root}",
        f"Eval.dataset.root={root}",
        "Export.input_shape=[3, 32, 32]",
        "Train.transforms=[{Resize: {size: [32, 32]}}, {ToTensor: {}}]",
        "Eval.transforms=[{Resize: {size: [32, 32]}}, {ToTensor: {}}]",
        "Architecture.num_classes=2",
    ]
    config = load_config(CONFIGS / "folder_resnet18.yml", overrides)
    task.check_config(config)
    train, evalset = task.build_datasets(config)
    assert len(train) == 6 and train.classes == ["ants", "bees"]
    assert train[0][0].shape == (3, 32, 32)
    assert task.postprocess_config(config)["label_list"] == ["ants", "bees"]
    samples = list(task.eval_samples(config))
    assert samples[4] == (str(root / "bees" / "1.png"), 1)
    (batch,) = task.preprocess(task.preprocess_config(config), [root / "bees" / "1.png"])
    np.testing.assert_array_equal(batch[0], evalset[4][0])
    model = task.build_model(config)
    assert model(__import__("paddlectl.framework", fromlist=["to_tensor"]).to_tensor(batch)).shape == [1, 2]


def test_missing_dataset_directory_is_a_data_error(task, tmp_path):
    config = load_config(CONFIGS / "folder_resnet18.yml", [f"Train.dataset.root={tmp_path / 'nope'}"])
    with pytest.raises(DataError, match="does not exist"):
        task.build_datasets(config)


def test_cifar_binary_directory(task, tmp_path):
    rng = np.random.default_rng(1)
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    for name, n in [*((f"data_batch_{i}.bin", 2) for i in range(1, 6)), ("test_batch.bin", 3)]:
        records = np.concatenate([rng.integers(0, 10, (n, 1)), rng.integers(0, 256, (n, 3072))], axis=1)
        (folder / name).write_bytes(records.astype(np.uint8).tobytes())
    config = load_config(
        CONFIGS / "cifar10_mobilenetv3_small.yml",
        [f"Train.dataset.data_file={folder}", f"Eval.dataset.data_file={folder}"],
    )
    train, test = task.build_datasets(config)
    assert (len(train), len(test)) == (10, 3)
    assert train[0][0].shape == (3, 32, 32)
    raw, label = next(iter(task.eval_samples(config)))
    assert raw.shape == (32, 32, 3) and 0 <= label < 10


def test_optimizer_section_builds_optimizer_scheduler_and_clip():
    net = LeNet()
    section = {
        "name": "Momentum",
        "momentum": 0.9,
        "weight_decay": 1e-4,
        "lr": {"name": "StepDecay", "learning_rate": 0.1, "step_size": 2, "interval": "step"},
        "grad_clip": {"name": "ClipGradByGlobalNorm", "clip_norm": 1.0},
    }
    optimizer, scheduler = build_optimizer(section, net.parameters())
    assert type(optimizer).__name__ == "Momentum" and optimizer._learning_rate is scheduler
    assert scheduler() == 0.1 and type(optimizer._grad_clip).__name__ == "ClipGradByGlobalNorm"
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        build_optimizer({"name": "SGD", "lerning_rate": 0.1}, net.parameters())
    with pytest.raises(ConfigError, match="interval is 'batch'"):
        build_optimizer(
            {"lr": {"name": "StepDecay", "learning_rate": 0.1, "step_size": 1, "interval": "batch"}}, net.parameters()
        )


def test_eval_harness_section_is_left_to_the_harness(task):
    config = load_config(DIGITS, ["Eval.harness={batch_sizes: [1], repeats: 20}"])
    task.check_config(config)
    with pytest.raises(ConfigError, match="Train"):
        task.check_config(load_config(DIGITS, ["Train.harness={repeats: 1}"]))


def test_a_typed_error_from_a_built_part_keeps_its_type():
    """A dataset that names its bad file:line raises DataError; building it from a config must not
    turn that into a ConfigError (the other exceptions of a constructor do become ConfigErrors)."""

    def broken(path):
        raise DataError(f"{path}:3: malformed label")

    def typo(path):
        raise ValueError("no such mode")

    with pytest.raises(DataError, match="labels.txt:3"):
        instantiate({"name": "Broken", "path": "labels.txt"}, {"Broken": broken}, "Train.dataset")
    with pytest.raises(ConfigError, match="Train.dataset"):
        instantiate({"name": "Typo", "path": "labels.txt"}, {"Typo": typo}, "Train.dataset")
