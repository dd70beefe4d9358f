"""paddle.vision.ops' detection box ops (prior_box, yolo_box, distribute_fpn_proposals,
generate_proposals, matrix_nms, read_file) against real Paddle 3.3.1, and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import paddlectl.framework as ours
from paddlectl.framework.errors import DataError, ShapeError
from paddlectl.framework.vision import ops as vops


def _both(real_paddle, fn: str, arrays: list, **kwargs):
    """(Paddle's outputs, ours), each flattened to a list of arrays (None kept)."""
    results = []
    for mod in (real_paddle, ours):
        out = getattr(mod.vision.ops, fn)(*[mod.to_tensor(a) for a in arrays], **kwargs)
        flat = []
        for o in out if isinstance(out, tuple | list) else [out]:
            flat += [None if t is None else t.numpy() for t in (o if isinstance(o, list) else [o])]
        results.append(flat)
    return results


def _assert_same(want: list, got: list, tol: float = 1e-6):
    assert len(got) == len(want)
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        if w is None:
            assert g is None, i
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"output {i}")


PRIOR_CASES = [
    {"min_sizes": [2.0, 4.0], "clip": True, "flip": True},
    {"min_sizes": [3.0], "max_sizes": [6.0], "aspect_ratios": [2.0, 3.0], "flip": True, "steps": [2.0, 1.5]},
    {"min_sizes": [2.0, 5.0], "max_sizes": [4.0, 8.0], "aspect_ratios": [0.5, 1.0, 2.0],
     "min_max_aspect_ratios_order": True, "offset": 0.3, "variance": [0.1, 0.2, 0.3, 0.4]},
]  # fmt: skip


@pytest.mark.parametrize("kwargs", PRIOR_CASES)
def test_prior_box_matches_paddle(real_paddle, kwargs):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(size=(1, 3, 6, 9)).astype("float32"), rng.uniform(size=(1, 3, 9, 12)).astype("float32")]
    want, got = _both(real_paddle, "prior_box", arrays, **kwargs)
    _assert_same(want, got)


YOLO_CASES = [
    {"clip_bbox": True, "scale_x_y": 1.0},
    {"clip_bbox": False, "scale_x_y": 1.05, "conf_thresh": 0.6},
    {"iou_aware": True, "iou_aware_factor": 0.4},
]


@pytest.mark.parametrize("kwargs", YOLO_CASES)
def test_yolo_box_matches_paddle(real_paddle, kwargs):
    rng = np.random.default_rng(1)
    channels = 2 * (5 + 3 + int(kwargs.get("iou_aware", False)))
    x = rng.standard_normal((2, channels, 5, 6)).astype("float32")
    img = np.array([[300, 200], [120, 160]], np.int32)
    args = {"anchors": [10, 13, 16, 30], "class_num": 3, "conf_thresh": 0.3, "downsample_ratio": 16, **kwargs}
    want, got = _both(real_paddle, "yolo_box", [x, img], **args)
    assert (got[0] == 0).all(axis=-1).any() and (got[0] != 0).any()  # some boxes under the threshold, some not
    _assert_same(want, got, tol=2e-4)


@pytest.mark.parametrize("pixel_offset", [False, True])
def test_distribute_fpn_proposals_matches_paddle(real_paddle, pixel_offset):
    rng = np.random.default_rng(2)
    corner = rng.uniform(0, 500, (20, 2))
    rois = np.concatenate([corner, corner + rng.uniform(-5, 600, (20, 2))], axis=1).astype("float32")
    num = np.array([7, 0, 13], np.int32)
    attrs = {"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224, "pixel_offset": pixel_offset}
    outs = []
    for mod in (real_paddle, ours):
        multi, restore, per_level = mod.vision.ops.distribute_fpn_proposals(
            mod.to_tensor(rois), rois_num=mod.to_tensor(num), **attrs
        )
        outs.append([t.numpy() for t in [*multi, restore, *per_level]])
    _assert_same(*outs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"pre_nms_top_n": 40, "post_nms_top_n": 12, "nms_thresh": 0.6, "min_size": 3.0},
        {"pixel_offset": True, "eta": 0.8, "nms_thresh": 0.7},
        {"nms_thresh": 0.5, "min_size": 1000.0},  # nothing survives: one zero box
    ],
)
def test_generate_proposals_matches_paddle(real_paddle, kwargs):
    rng = np.random.default_rng(3)
    n, a, h, w = 2, 3, 6, 5
    corner = rng.uniform(0, 150, (h, w, a, 2))
    anchors = np.concatenate([corner, corner + rng.uniform(8, 90, (h, w, a, 2))], axis=-1).astype("float32")
    arrays = [
        rng.uniform(size=(n, a, h, w)).astype("float32"),
        (rng.standard_normal((n, 4 * a, h, w)) * 0.5).astype("float32"),
        np.array([[224.0, 200.0], [180.0, 224.0]], "float32"),
        anchors,
        rng.uniform(0.5, 1.5, (h, w, a, 4)).astype("float32"),
    ]
    want, got = _both(real_paddle, "generate_proposals", arrays, return_rois_num=True, **kwargs)
    _assert_same(want, got, tol=1e-4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"score_threshold": 0.3, "post_threshold": 0.1, "nms_top_k": 20, "keep_top_k": 15},
        {"score_threshold": 0.2, "post_threshold": 0.3, "nms_top_k": -1, "keep_top_k": -1, "use_gaussian": True,
         "gaussian_sigma": 1.5, "background_label": -1, "normalized": False},
        {"score_threshold": 0.9, "post_threshold": 0.95, "nms_top_k": 5, "keep_top_k": 3},  # maybe nothing kept
    ],
)  # fmt: skip
def test_matrix_nms_matches_paddle(real_paddle, kwargs):
    rng = np.random.default_rng(4)
    corner = rng.uniform(0, 20, (2, 25, 2))
    boxes = np.concatenate([corner, corner + rng.uniform(2, 12, (2, 25, 2))], axis=-1).astype("float32")
    scores = rng.uniform(size=(2, 4, 25)).astype("float32")
    want, got = _both(real_paddle, "matrix_nms", [boxes, scores], return_index=True, **kwargs)
    _assert_same(want, got)


YOLO_LOSS_CASES = [
    {"anchors": [10, 13, 16, 30], "anchor_mask": [0, 1], "use_label_smooth": True},
    {"anchors": [10, 13, 16, 30, 33, 23], "anchor_mask": [1, 2], "use_label_smooth": False, "score": True},
    {"anchors": [10, 13, 16, 30, 33, 23], "anchor_mask": [0, 2], "scale_x_y": 1.1, "ignore_thresh": 0.3},
]


@pytest.mark.parametrize("case", YOLO_LOSS_CASES)
def test_yolo_loss_and_its_gradient_match_paddle(real_paddle, case):
    rng = np.random.default_rng(5)
    case = dict(case)
    with_score, ignore = case.pop("score", False), case.pop("ignore_thresh", 0.5)
    x = rng.standard_normal((2, 2 * 8, 6, 6)).astype("float32")
    gt = np.concatenate([rng.uniform(0.05, 0.95, (2, 5, 2)), rng.uniform(0.02, 0.6, (2, 5, 2))], -1).astype("float32")
    gt[1, 4] = 0  # padding
    labels = rng.integers(0, 3, (2, 5)).astype("int32")
    score = rng.uniform(0.3, 1.0, (2, 5)).astype("float32")
    results = []
    for mod in (real_paddle, ours):
        t = mod.to_tensor(x, stop_gradient=False)
        loss = mod.vision.ops.yolo_loss(
            t, mod.to_tensor(gt), mod.to_tensor(labels), class_num=3, downsample_ratio=8,
            ignore_thresh=ignore,
            gt_score=mod.to_tensor(score) if with_score else None, **case,
        )  # fmt: skip
        loss.sum().backward()
        results.append((loss.numpy(), t.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    assert got.shape == want.shape == (2,)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-4, atol=1e-6)


def test_read_file_gives_the_bytes(tmp_path, real_paddle):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 3)
    got = vops.read_file(str(path))
    want = real_paddle.vision.ops.read_file(str(path))
    assert got.dtype == ours.uint8 and got.numpy().tolist() == want.numpy().tolist()
    with pytest.raises(DataError, match="cannot read"):
        vops.read_file(str(tmp_path / "missing.jpg"))


def test_decode_jpeg_reads_what_opencv_reads(tmp_path):
    """Paddle decodes on the GPU only; the reference here is OpenCV's own reading of the file."""
    cv2 = pytest.importorskip("cv2", reason="the framework decodes with OpenCV")
    path = str(tmp_path / "image.jpg")
    cv2.imwrite(path, np.random.default_rng(0).integers(0, 256, (20, 30, 3), dtype=np.uint8))
    data = vops.read_file(path)
    rgb = vops.decode_jpeg(data)
    assert rgb.dtype == ours.uint8 and rgb.shape == [3, 20, 30]
    np.testing.assert_array_equal(rgb.numpy(), cv2.imread(path)[..., ::-1].transpose(2, 0, 1))
    np.testing.assert_array_equal(vops.decode_jpeg(data, "gray").numpy()[0], cv2.imread(path, cv2.IMREAD_GRAYSCALE))
    with pytest.raises(DataError, match="not a decodable image"):
        vops.decode_jpeg(ours.to_tensor(np.arange(50, dtype=np.uint8)))
    with pytest.raises(ShapeError, match="mode must be"):
        vops.decode_jpeg(data, "cmyk")


def test_bad_arguments_are_named():
    x = ours.ones([1, 14, 4, 4])
    with pytest.raises(ShapeError, match=r"img_size must be a \[1, 2\]"):
        vops.yolo_box(x, ours.ones([2, 2], "int32"), [10, 13, 16, 30], 2, 0.1, 8)
    with pytest.raises(ShapeError, match="channels"):
        vops.yolo_box(x, ours.ones([1, 2], "int32"), [10, 13, 16, 30], 3, 0.1, 8)
    with pytest.raises(ShapeError, match="rois_num"):
        vops.distribute_fpn_proposals(ours.ones([3, 4]), 2, 5, 4, 224)
    with pytest.raises(ShapeError, match="must sum to the 3 RoIs"):
        vops.distribute_fpn_proposals(ours.ones([3, 4]), 2, 5, 4, 224, rois_num=ours.to_tensor(np.array([1], np.int32)))
    with pytest.raises(ShapeError, match="max_sizes must pair"):
        vops.prior_box(x, x, [2.0, 4.0], [5.0])
    with pytest.raises(ShapeError, match=r"scores must be \[N, C, M\]"):
        vops.matrix_nms(ours.ones([1, 5, 4]), ours.ones([1, 2, 4]), 0.1, 0.1, 10, 10)
