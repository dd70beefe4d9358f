"""File lists, label checks (values, 0/255 binary masks) and PaddleSeg's transforms."""

import numpy as np
import pytest
from PIL import Image

from paddlectl.framework.errors import ConfigError, DataError
from paddlectl.framework.ops.random import seed
from paddlectl.seg.data import transforms as T
from paddlectl.seg.data.dataset import Dataset


def _write_set(root, labels, image_size=None):
    (root / "img").mkdir(parents=True, exist_ok=True)
    (root / "ann").mkdir(exist_ok=True)
    lines = []
    for i, label in enumerate(labels):
        height, width = image_size or label.shape
        Image.fromarray(np.full((height, width, 3), 40 * i % 255, np.uint8)).save(root / "img" / f"{i}.png")
        Image.fromarray(label.astype(np.uint8), "L").save(root / "ann" / f"{i}.png")
        lines.append(f"img/{i}.png ann/{i}.png\n")
    (root / "list.txt").write_text("".join(lines), encoding="utf-8")
    return root


def test_items_are_chw_float_images_and_int_labels(tmp_path):
    label = np.array([[0, 1, 2, 255]] * 4)
    dataset = Dataset("list.txt", 3, _write_set(tmp_path, [label]), [T.Normalize()])
    image, target = dataset[0]
    assert image.shape == (3, 4, 4) and image.dtype == np.float32 and target.dtype == np.int64
    assert target.tolist() == label.tolist()


def test_a_label_outside_the_classes_is_refused_with_its_file_and_line(tmp_path):
    root = _write_set(tmp_path, [np.zeros((4, 4)), np.array([[0, 1], [7, 255]])])
    with pytest.raises(DataError, match=r"ann/1\.png.*list\.txt:2.*values \[7\] outside 0\.\.2"):
        Dataset("list.txt", 3, root)


def test_a_binary_mask_stored_as_0_255_is_named_with_the_fix(tmp_path):
    root = _write_set(tmp_path, [np.array([[0, 255], [0, 255]]), np.array([[0, 0], [255, 255]])])
    with pytest.raises(DataError, match="binary masks stored as 0/255.*Convert them to 0/1"):
        Dataset("list.txt", 2, root)


def test_a_two_class_set_that_also_ignores_some_pixels_passes(tmp_path):
    root = _write_set(tmp_path, [np.array([[0, 1], [0, 255]]), np.array([[0, 0], [255, 255]])])
    assert len(Dataset("list.txt", 2, root)) == 2


def test_missing_files_and_malformed_lines_name_the_line(tmp_path):
    root = _write_set(tmp_path, [np.zeros((2, 2))])
    (root / "list.txt").write_text("img/0.png ann/0.png\nimg/9.png ann/0.png\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"list\.txt:2: image .*9\.png.* does not exist"):
        Dataset("list.txt", 2, root)
    (root / "list.txt").write_text("img/0.png\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"list\.txt:1: expected 'image_path label_path'"):
        Dataset("list.txt", 2, root)


def test_a_colour_label_and_a_size_mismatch_are_refused(tmp_path):
    root = _write_set(tmp_path, [np.zeros((4, 4))], image_size=(4, 6))
    with pytest.raises(DataError, match="differ in size"):
        Dataset("list.txt", 2, root)[0]
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(root / "ann" / "0.png")
    with pytest.raises(DataError, match="is a RGB image"):
        Dataset("list.txt", 2, root)


def test_a_truncated_label_png_is_a_data_error_naming_it(tmp_path):
    root = _write_set(tmp_path, [np.zeros((8, 8))])
    data = (root / "ann" / "0.png").read_bytes()
    (root / "ann" / "0.png").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"cannot read label .*0\.png"):
        Dataset("list.txt", 2, root)


def _sample(height=20, width=30):
    rng = np.random.default_rng(1)
    blocks = rng.integers(0, 3, (height // 10, width // 10)).astype(np.uint8)
    label = np.kron(blocks, np.ones((10, 10), np.uint8))  # regions, so most pixels are inside one
    return {"img": rng.integers(0, 256, (height, width, 3)).astype(np.uint8), "label": label}


def test_geometry_keeps_image_and_label_aligned_and_invents_no_label_value():
    seed(3)
    data = _sample()
    values = set(np.unique(data["label"]).tolist())
    data["img"][..., 0] = data["label"] * 50  # the image carries its label, to check alignment
    for transform in (T.ResizeStepScaling(0.5, 2.0, 0.25), T.RandomHorizontalFlip(1.0), T.RandomPaddingCrop([40, 16])):
        data = transform(data)
    assert data["img"].shape[:2] == data["label"].shape == (16, 40)
    assert set(np.unique(data["label"]).tolist()) <= values | {255}
    inside = data["label"] != 255
    agree = np.abs(data["img"][..., 0][inside].astype(int) - data["label"][inside].astype(int) * 50) <= 25
    assert agree.mean() > 0.9  # bilinear image edges may blend; nearest labels never do


def test_padding_fills_the_label_with_the_ignore_value_and_the_image_with_the_pad_value():
    seed(0)
    data = T.RandomPaddingCrop([8, 6], im_padding_value=127.5)(
        {"img": np.zeros((4, 5, 3), np.uint8), "label": np.zeros((4, 5), np.uint8)}
    )
    assert data["label"].shape == (6, 8) and (data["label"][4:] == 255).all() and (data["label"][:, 5:] == 255).all()
    assert (data["img"][4:] == 128).all()


def test_step_scaling_draws_only_the_listed_factors():
    seed(0)
    scaler = T.ResizeStepScaling(0.5, 1.5, 0.5)
    assert {scaler.factor() for _ in range(50)} == {0.5, 1.0, 1.5}


def test_normalize_and_distort():
    data = T.Normalize([0.5] * 3, [0.25] * 3)({"img": np.full((2, 2, 3), 255, np.uint8), "label": None})
    np.testing.assert_allclose(data["img"], 2.0)
    image = np.arange(18, dtype=np.uint8).reshape(2, 3, 3) * 14  # every channel of every pixel its own value
    data = T.Normalize([0.5, 0.25, 0.0], [0.5, 0.25, 1.0])({"img": image, "label": None})
    np.testing.assert_allclose(data["img"], (image / 255 - [0.5, 0.25, 0.0]) / [0.5, 0.25, 1.0], rtol=1e-6)
    seed(0)
    sample = _sample()
    label = sample["label"].copy()
    out = T.RandomDistort(brightness_prob=1, contrast_prob=1, saturation_prob=1, hue_prob=1)(dict(sample))
    assert out["img"].shape == sample["img"].shape and out["img"].dtype == np.uint8
    assert not np.array_equal(out["img"], sample["img"]) and np.array_equal(out["label"], label)


def test_bad_transform_arguments_are_config_errors():
    with pytest.raises(ConfigError, match="width, height"):
        T.RandomPaddingCrop([1, 2, 3])
    with pytest.raises(ConfigError, match="min_scale_factor"):
        T.ResizeStepScaling(2.0, 1.0)
