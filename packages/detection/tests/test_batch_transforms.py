"""PaddleDetection's batch transforms (``BatchRandomResize``) from a det.picodet config: one size per
batch drawn from the list, boxes following the pixels, seeded; and training on such batches."""

import copy
import json

import cv2
import numpy as np
import pytest

from paddlectl.detection.data.labels import unpack
from paddlectl.detection.data.transforms import BatchRandomResize
from paddlectl.detection.picodet.task import PicoDetTask
from paddlectl.framework.errors import ConfigError
from paddlectl.framework.hapi.trainer import train
from paddlectl.framework.io import DataLoader

SIZES = [[32, 48], [64, 64], [96, 64]]
BATCH_STEPS = [
    {"BatchRandomResize": {"target_size": SIZES, "keep_ratio": False, "random_size": True, "random_interp": True}},
    {"Permute": {}},
    {"PadGT": {"num_max_boxes": 2}},
]


def scenes(root, count=8):
    """``count`` images of assorted sizes, each one white rectangle (its box) on black."""
    rng = np.random.default_rng(0)
    images, annotations = [], []
    for i in range(count):
        height, width = (int(v) for v in rng.integers(40, 90, 2))
        x, y = (int(v) for v in rng.integers(2, 12, 2))
        w, h = int(rng.integers(10, width - x - 2)), int(rng.integers(10, height - y - 2))
        image = np.zeros((height, width, 3), np.uint8)
        image[y : y + h, x : x + w] = 255
        cv2.imwrite(str(root / f"{i}.png"), image)
        images.append({"id": i + 1, "file_name": f"{i}.png", "width": width, "height": height})
        annotations.append({"id": i + 1, "image_id": i + 1, "category_id": 1, "bbox": [x, y, w, h], "iscrowd": 0})
    categories = [{"id": 1, "name": "box"}, {"id": 2, "name": "other"}]
    (root / "ann.json").write_text(json.dumps({"images": images, "annotations": annotations, "categories": categories}))


def config(root, batch_steps=BATCH_STEPS, **loader):
    dataset = {"name": "COCODataSet", "dataset_dir": str(root), "anno_path": "ann.json"}
    evaluation = [{"Decode": {}}, {"Resize": {"target_size": [64, 64], "keep_ratio": False}}, {"Permute": {}},
                  {"PadGT": {"num_max_boxes": 2}}]  # fmt: skip
    return {
        "Global": {"epochs": 1, "output_dir": str(root / "run"), "seed": 3},
        "Architecture": {"Backbone": {"name": "LCNet", "scale": 0.25}, "Neck": {"name": "LCPAN", "out_channels": 16},
                         "Head": {"name": "PicoHead", "num_classes": 2, "num_convs": 1}},
        "Train": {"dataset": {**dataset, "transforms": [{"Decode": {}}, {"RandomFlip": {"prob": 0.5}}],
                              "batch_transforms": copy.deepcopy(batch_steps)},
                  "loader": {"batch_size": 2, "shuffle": True, "drop_last": True, **loader}},
        "Eval": {"dataset": {**dataset, "transforms": evaluation}, "loader": {"batch_size": 4}},
    }  # fmt: skip


def batches(cfg, seed):
    """Every batch of the Train set, in order, as the trainer's DataLoader reads them."""
    task = PicoDetTask()
    task.check_config(cfg)
    dataset = task.dataset(cfg, "Train")
    np.random.seed(seed)
    loader = DataLoader(dataset, batch_sampler=[[0, 1], [2, 3], [4, 5], [6, 7], [1, 5], [2, 6]])
    return [(images.numpy(), labels.numpy()) for images, labels in loader]


def bright_box(image):
    ys, xs = np.nonzero(image.max(0) > 127)
    return [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]


def test_each_batch_takes_one_drawn_size_and_its_boxes_follow_the_pixels(tmp_path):
    scenes(tmp_path)
    drawn = batches(config(tmp_path), seed=0)
    sizes = {images.shape[2:] for images, _ in drawn}
    assert sizes <= {tuple(s) for s in SIZES} and len(sizes) > 1  # one size per batch (they stack), several drawn
    for images, tables in drawn:
        for image, table in zip(images, tables, strict=True):
            label = unpack(table)
            assert (label.height, label.width) == image.shape[1:]
            np.testing.assert_allclose(label.boxes[0], bright_box(image), atol=1.0)


def test_the_draws_follow_the_seed(tmp_path):
    scenes(tmp_path)
    first, again, other = (batches(config(tmp_path), seed) for seed in (0, 0, 1))
    for (a, la), (b, lb) in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(la, lb)
    assert [x.shape for x, _ in first] != [x.shape for x, _ in other]


def test_paddledetection_call_form_resizes_the_whole_batch_alike():
    samples = [
        {"image": np.zeros((h, w, 3), np.uint8), "gt_bbox": np.array([[1, 2, 9, 10]], np.float32),
         "scale_factor": np.ones(2, np.float32)}
        for h, w in ((20, 30), (40, 10))
    ]  # fmt: skip
    np.random.seed(0)
    out = BatchRandomResize([[16, 32], [64, 48]], keep_ratio=False)(samples)
    assert out[0]["image"].shape == out[1]["image"].shape
    height, width = out[0]["image"].shape[:2]
    np.testing.assert_allclose(out[1]["gt_bbox"], [[width / 10, 2 * height / 40, 9 * width / 10, 10 * height / 40]])
    fixed = BatchRandomResize([24, 40], keep_ratio=False, random_size=False)
    assert fixed([samples[0]])[0]["image"].shape[:2] == (24, 40)


def test_training_runs_on_batches_of_several_sizes(tmp_path):
    scenes(tmp_path)
    train(PicoDetTask(), config(tmp_path), progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert any(r["kind"] == "eval" for r in records)
    assert all(np.isfinite(r["loss"]) for r in records if "loss" in r)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda c: c["Train"]["dataset"]["transforms"].append(BATCH_STEPS[0]), "list it under batch_transforms"),
        (lambda c: c["Eval"]["dataset"].update(batch_transforms=BATCH_STEPS), "Eval.dataset.batch_transforms"),
        (lambda c: c["Train"]["loader"].update(drop_last=False), "drop_last: true"),
        (
            lambda c: c["Train"]["dataset"]["batch_transforms"][0]["BatchRandomResize"].update(target_size=64),
            "must be a list of sizes",
        ),
        (lambda c: c["Train"]["dataset"].update(batch_transforms=BATCH_STEPS[:2]), "end with PadGT"),
    ],
)
def test_misplaced_batch_transforms_are_config_errors(tmp_path, change, fragment):
    scenes(tmp_path, 2)
    cfg = config(tmp_path)
    change(cfg)
    with pytest.raises(ConfigError, match=fragment):
        PicoDetTask().check_config(cfg)
