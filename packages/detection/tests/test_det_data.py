"""COCO/VOC readers (bad input named, degenerate boxes dropped and counted) and the transforms."""

import json

import cv2
import numpy as np
import pytest

from paddlectl.detection.data.coco import COCODataSet
from paddlectl.detection.data.labels import unpack
from paddlectl.detection.data.transforms import (
    Decode,
    NormalizeImage,
    Pad,
    PadGT,
    Permute,
    RandomCrop,
    RandomDistort,
    RandomFlip,
    Resize,
)
from paddlectl.detection.data.voc import VOCDataSet
from paddlectl.framework.errors import DataError

PIPELINE = [Decode(), Resize([32, 32], keep_ratio=True), Pad([32, 32]), NormalizeImage(), Permute(), PadGT(4)]


def coco_set(tmp_path, annotations, images=None, width=64, height=32):
    cv2.imwrite(str(tmp_path / "a.png"), np.full((height, width, 3), 128, np.uint8))
    doc = {
        "images": images or [{"id": 7, "file_name": "a.png", "width": width, "height": height}],
        "annotations": [{"id": i + 1, "image_id": 7, "iscrowd": 0, **a} for i, a in enumerate(annotations)],
        "categories": [{"id": 3, "name": "cat"}, {"id": 5, "name": "dog"}],
    }
    (tmp_path / "ann.json").write_text(json.dumps(doc))
    return {"dataset_dir": str(tmp_path), "image_dir": "", "anno_path": "ann.json"}


def test_coco_sample_becomes_image_and_label_table_in_input_pixels(tmp_path):
    args = coco_set(tmp_path, [{"category_id": 5, "bbox": [8, 4, 16, 8]}])
    dataset = COCODataSet(**args, transforms=PIPELINE)
    image, table = dataset[0]
    label = unpack(table)
    assert image.shape == (3, 32, 32) and dataset.label_names == ["cat", "dog"]
    assert (label.height, label.width, label.image_id) == (32, 32, 7)
    np.testing.assert_allclose(label.scale, [0.5, 0.5])
    np.testing.assert_allclose(label.boxes, [[4, 2, 12, 6]])
    assert label.classes.tolist() == [1]


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        (
            {"category_id": 5, "bbox": [60, 4, 16, 8]},
            r"annotation id 1 \(image id 7\): bbox .* outside the 64x32 image",
        ),
        (
            {"category_id": 9, "bbox": [8, 4, 16, 8]},
            r"annotation id 1 \(image id 7\): category_id 9 is not in categories",
        ),
    ],
)
def test_bad_coco_records_are_named(tmp_path, annotation, fragment):
    args = coco_set(tmp_path, [annotation])
    with pytest.raises(DataError, match=fragment) as caught:
        COCODataSet(**args)
    assert "ann.json" in str(caught.value)


def test_missing_image_is_named(tmp_path):
    images = [{"id": 7, "file_name": "gone.png", "width": 64, "height": 32}]
    args = coco_set(tmp_path, [], images=images)
    with pytest.raises(DataError, match=r"image id 7: file .*gone.png' does not exist"):
        COCODataSet(**args)


def test_degenerate_boxes_are_dropped_and_counted(tmp_path):
    args = coco_set(tmp_path, [{"category_id": 3, "bbox": [8, 4, 0, 8]}, {"category_id": 3, "bbox": [8, 4, 4, 4]}])
    with pytest.warns(UserWarning, match="dropped 1 degenerate"):
        dataset = COCODataSet(**args, transforms=PIPELINE)
    assert dataset.dropped == 1 and len(unpack(dataset[0][1]).boxes) == 1


XML = "<annotation><size><width>40</width><height>20</height></size>{}</annotation>"
OBJECT = (
    "<object><name>{}</name><difficult>0</difficult>"
    "<bndbox><xmin>2</xmin><ymin>3</ymin><xmax>12</xmax><ymax>13</ymax></bndbox></object>"
)


def voc_set(tmp_path, name="dog"):
    cv2.imwrite(str(tmp_path / "a.jpg"), np.zeros((20, 40, 3), np.uint8))
    (tmp_path / "a.xml").write_text(XML.format(OBJECT.format(name)))
    (tmp_path / "labels.txt").write_text("cat\ndog\n")
    (tmp_path / "list.txt").write_text("a.jpg a.xml\n")


def test_voc_reader_and_unknown_class(tmp_path):
    voc_set(tmp_path)
    dataset = VOCDataSet(str(tmp_path), "list.txt", "labels.txt", transforms=PIPELINE[:1] + [PadGT(4)])
    label = unpack(dataset[0][1])
    np.testing.assert_allclose(label.boxes, [[2, 3, 12, 13]])
    assert label.classes.tolist() == [1]
    voc_set(tmp_path, "cow")
    with pytest.raises(DataError, match=r"a.xml: object 0: class 'cow' is not in label_list"):
        VOCDataSet(str(tmp_path), "list.txt", "labels.txt")


def sample():
    image = np.zeros((40, 60, 3), np.uint8)
    image[10:20, 5:25] = 255  # the object's pixels
    return {
        "image": image,
        "gt_bbox": np.array([[5, 10, 25, 20]], np.float32),
        "gt_class": np.array([[0]]),
        "is_crowd": np.array([[0]]),
        "scale_factor": np.array([1.0, 1.0], np.float32),
    }


def box_of_bright_pixels(image):
    ys, xs = np.nonzero(image.max(2) > 127)
    return [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]


def test_flip_resize_and_crop_carry_boxes_with_the_pixels():
    np.random.seed(0)
    data = RandomFlip(prob=1.0)(sample())
    np.testing.assert_allclose(data["gt_bbox"][0], box_of_bright_pixels(data["image"]))
    data = Resize([80, 120], keep_ratio=False, interp=0)(sample())
    np.testing.assert_allclose(data["gt_bbox"][0], box_of_bright_pixels(data["image"]))
    np.testing.assert_allclose(data["scale_factor"], [2.0, 2.0])
    for _ in range(5):
        data = RandomCrop(scaling=(0.5, 1.0), thresholds=[0.0])(sample())
        box = data["gt_bbox"][0]
        assert (box >= 0).all() and box[2] <= data["image"].shape[1] and box[3] <= data["image"].shape[0]
        np.testing.assert_allclose(box, box_of_bright_pixels(data["image"]))


def test_keep_ratio_resize_fits_inside_and_pad_fills_to_the_size():
    data = Resize([80, 80], keep_ratio=True, interp=0)(sample())  # 40x60 -> 53x80 (limited by the width)
    assert data["image"].shape == (53, 80, 3)
    np.testing.assert_allclose(data["gt_bbox"][0], box_of_bright_pixels(data["image"]), atol=1.0)
    data = Pad([80, 80])(data)
    assert data["image"].shape == (80, 80, 3) and not data["image"][53:].any()


def test_keep_ratio_fits_the_short_side_to_the_short_target_in_either_orientation():
    # PaddleDetection's rule: scale = min(32/40, 48/60) = 0.8 for a 60x40 portrait image and a
    # [32, 48] target (fitting inside [32, 48] as [h, w] would give 0.533 and a 32x21 image)
    portrait = sample()
    portrait["image"] = np.ascontiguousarray(portrait["image"].transpose(1, 0, 2))
    portrait["gt_bbox"] = portrait["gt_bbox"][:, [1, 0, 3, 2]]
    data = Resize([32, 48], keep_ratio=True, interp=0)(portrait)
    assert data["image"].shape == (48, 32, 3)
    np.testing.assert_allclose(data["im_shape"], [48, 32])
    np.testing.assert_allclose(data["scale_factor"], [0.8, 0.8])
    np.testing.assert_allclose(data["gt_bbox"][0], box_of_bright_pixels(data["image"]), atol=1.0)


def test_distort_changes_colours_only_and_follows_the_seed():
    def coloured():  # mid tones, so no jitter saturates back to the original
        data = sample()
        data["image"] = np.where(data["image"] > 0, np.uint8([160, 120, 60]), np.uint8([40, 90, 110]))
        return data

    draws = []
    for seed in (0, 0, 1):
        np.random.seed(seed)
        draws.append(RandomDistort(prob=1.0)(coloured()))
    np.testing.assert_array_equal(draws[0]["image"], draws[1]["image"])
    assert (draws[0]["image"] != coloured()["image"]).any() and (draws[0]["image"] != draws[2]["image"]).any()
    assert draws[0]["image"].dtype == np.uint8 and draws[0]["image"].shape == (40, 60, 3)
    np.testing.assert_array_equal(draws[0]["gt_bbox"], sample()["gt_bbox"])
    unchanged = RandomDistort(prob=0.0)(coloured())
    np.testing.assert_array_equal(unchanged["image"], coloured()["image"])


def test_normalize_then_permute_give_chw_standardised_floats():
    data = Permute()(NormalizeImage(mean=[0.5, 0.25, 0.0], std=[0.5, 0.25, 1.0])(sample()))
    image = data["image"]
    assert image.shape == (3, 40, 60) and image.dtype == np.float32 and image.flags.c_contiguous
    np.testing.assert_allclose(image[:, 15, 10], [1.0, 3.0, 1.0])  # white: (1 - mean) / std
    np.testing.assert_allclose(image[:, 0, 0], [-1.0, -1.0, 0.0])  # black: -mean / std
    raw = NormalizeImage(mean=[1, 2, 3], std=[2, 2, 2], is_scale=False)(sample())["image"]
    np.testing.assert_allclose(raw[15, 10], [127.0, 126.5, 126.0])


def test_a_voc_eval_set_gives_the_task_voc_map_per_class(tmp_path):
    from paddlectl.detection.picodet.task import PicoDetTask

    voc_set(tmp_path)
    steps = [{"Decode": {}}, {"Resize": {"target_size": [32, 32], "keep_ratio": False}}, {"Permute": {}}, {"PadGT": {}}]
    split = {"dataset": {"name": "VOCDataSet", "dataset_dir": str(tmp_path), "anno_path": "list.txt",
                         "label_list": "labels.txt", "transforms": steps}}  # fmt: skip
    config = {
        "Architecture": {"Backbone": {"name": "LCNet", "scale": 0.25}, "Neck": {"name": "LCPAN", "out_channels": 16},
                         "Head": {"name": "PicoHead", "num_classes": 2}},
        "Train": split, "Eval": split, "Metric": {"name": "VOCMetric", "map_type": "11point"},
    }  # fmt: skip
    task = PicoDetTask()
    task.check_config(config)
    assert task.main_indicator(config) == "mAP"
    assert task.build_metrics(config)[0].name() == ["mAP", "ap_cat", "ap_dog"]
    assert unpack(task.dataset(config, "Eval")[0][1]).classes.tolist() == [1]
