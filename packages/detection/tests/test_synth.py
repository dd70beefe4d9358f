import json

import numpy as np
import pytest
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO

from paddlectl.detection.synth import CATEGORIES, generate_scenes
from paddlectl.framework.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    out = tmp_path_factory.mktemp("scenes")
    return generate_scenes(out, 6, seed=3, image_size=(96, 128), max_objects=5, min_size=12, max_size=40)


def test_scenes_are_a_coco_set_whose_boxes_bound_their_masks(scenes):
    coco = COCO(str(scenes))
    assert sorted(c["name"] for c in coco.loadCats(coco.getCatIds())) == sorted(CATEGORIES)
    assert len(coco.getImgIds()) == 6 and coco.getAnnIds()
    for ann in coco.loadAnns(coco.getAnnIds()):
        image = coco.loadImgs(ann["image_id"])[0]
        assert (scenes.parent / image["file_name"]).is_file()
        mask = coco.annToMask(ann)
        assert mask.shape == (96, 128) and mask.sum() == ann["area"] > 0
        ys, xs = np.nonzero(mask)
        assert ann["bbox"] == [xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1]


def test_visible_masks_of_one_scene_never_overlap(scenes):
    coco = COCO(str(scenes))
    for image_id in coco.getImgIds():
        masks = [coco.annToMask(a) for a in coco.loadAnns(coco.getAnnIds(imgIds=image_id))]
        if masks:
            assert np.stack(masks).sum(0).max() == 1


def test_same_seed_same_scenes_other_seed_other_scenes(tmp_path, scenes):
    again = json.loads(
        generate_scenes(
            tmp_path / "a", 6, seed=3, image_size=(96, 128), max_objects=5, min_size=12, max_size=40
        ).read_text()
    )
    other = json.loads(
        generate_scenes(
            tmp_path / "b", 6, seed=4, image_size=(96, 128), max_objects=5, min_size=12, max_size=40
        ).read_text()
    )
    first = json.loads(scenes.read_text())
    assert again["annotations"] == first["annotations"]
    assert other["annotations"] != first["annotations"]
    rle = first["annotations"][0]["segmentation"]
    assert mask_utils.area({"size": rle["size"], "counts": rle["counts"].encode()}) == first["annotations"][0]["area"]


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"n": 0}, "positive"), ({"n": 2, "image_size": (16, 16)}, "too small"), ({"n": 2, "min_size": 4}, "min_size")],
)
def test_bad_arguments_are_config_errors(tmp_path, kwargs, fragment):
    with pytest.raises(ConfigError, match=fragment):
        generate_scenes(tmp_path, **kwargs)


def test_out_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match="is a file"):
        generate_scenes(tmp_path / "f", 1)
