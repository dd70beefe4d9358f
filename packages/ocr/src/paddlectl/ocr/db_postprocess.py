"""DB (Differentiable Binarization) post-processing: the detector's probability map -> text boxes.

PaddleOCR's ``DBPostProcess`` (quad boxes) with its defaults as RapidOCR ships them (thresh 0.3,
box_thresh 0.5, unclip_ratio 1.6, 2x2 dilation, "fast" box score, min side 3): binarise, dilate,
take each contour (``cv2.findContours``), fit its minimum-area rectangle, score it by the mean
probability inside, grow it by ``area * unclip_ratio / perimeter`` (pyclipper), fit again and scale
to the source image (in float32, where PaddleOCR rounds). The same OpenCV/pyclipper calls in the
same order give PaddleOCR's boxes exactly, in its order.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from shapely.geometry import Polygon

from paddlectl.framework.errors import ConfigError, DataError

from .geometry import mini_box, polygon_mask, round_offset

SCORE_MODES = ("fast", "slow")


@dataclass(frozen=True)
class DBParams:
    """PaddleOCR's ``PostProcess`` settings for DB (same names); ``score_mode`` "fast" scores the
    rectangle, "slow" the contour itself."""

    thresh: float = 0.3
    box_thresh: float = 0.5
    max_candidates: int = 1000
    unclip_ratio: float = 1.6
    use_dilation: bool = True
    min_size: int = 3
    score_mode: str = "fast"

    def __post_init__(self) -> None:
        for name in ("thresh", "box_thresh"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ConfigError(f"DB post-processing: {name} must be a number in [0, 1], got {value!r}")
        for name in ("max_candidates", "min_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "max_candidates" else 0):
                raise ConfigError(
                    f"DB post-processing: {name} must be a non-negative integer (max_candidates >= 1), got {value!r}"
                )
        if (
            isinstance(self.unclip_ratio, bool)
            or not isinstance(self.unclip_ratio, int | float)
            or not self.unclip_ratio > 0
        ):
            raise ConfigError(f"DB post-processing: unclip_ratio must be a positive number, got {self.unclip_ratio!r}")
        if self.score_mode not in SCORE_MODES:
            raise ConfigError(
                f"DB post-processing: score_mode must be one of {', '.join(SCORE_MODES)}, got {self.score_mode!r}"
            )


def mean_inside(prob: np.ndarray, polygon: np.ndarray) -> float:
    """Mean of ``prob`` over the pixels ``polygon`` covers (``cv2.fillPoly`` + ``cv2.mean`` on its
    bounding window, as PaddleOCR's box score)."""
    h, w = prob.shape
    lo = np.clip(np.floor(polygon.min(axis=0)), 0, [w - 1, h - 1]).astype(np.int64)
    hi = np.clip(np.ceil(polygon.max(axis=0)), 0, [w - 1, h - 1]).astype(np.int64)
    mask = polygon_mask(polygon - lo, hi[1] - lo[1] + 1, hi[0] - lo[0] + 1)
    return cv2.mean(prob[lo[1] : hi[1] + 1, lo[0] : hi[0] + 1], mask.astype(np.uint8))[0]


def checked_map(prob) -> np.ndarray:
    """A non-empty 2-D finite float map; DataError otherwise (a model's output is user input here)."""
    prob = np.asarray(prob)
    if prob.ndim != 2 or min(prob.shape) < 1 or prob.dtype.kind not in "fiub":
        raise DataError(
            f"DB post-processing takes one probability map [H, W] of numbers, got shape {list(prob.shape)} "
            f"dtype {prob.dtype}; pass output[0, 0] of the detector"
        )
    prob = prob.astype(np.float32, copy=False)
    if not np.isfinite(prob).all():
        raise DataError("the DB probability map holds NaN or infinite values; check the detector's input")
    return prob


def boxes_from_probability(prob: np.ndarray, src_h: int, src_w: int, params: DBParams = DBParams()):
    """Boxes (int32 [K, 4, 2], corners TL, TR, BR, BL in source pixels) and their scores for one
    probability map [H, W] of an image ``src_h`` x ``src_w``."""
    prob = checked_map(prob)
    for name, value in (("src_h", src_h), ("src_w", src_w)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise DataError(
                f"DB post-processing: {name} must be a positive integer (the source image size), got {value!r}"
            )
    height, width = prob.shape
    mask = (prob > params.thresh).astype(np.uint8)
    if params.use_dilation:
        mask = cv2.dilate(mask, np.ones((2, 2), np.uint8))
    contours = cv2.findContours(mask * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)[-2]
    boxes, scores = [], []
    for contour in contours[: params.max_candidates]:
        box, short_side = mini_box(contour)
        if short_side < params.min_size:
            continue
        score = mean_inside(prob, box if params.score_mode == "fast" else contour.reshape(-1, 2))
        if score < params.box_thresh:
            continue
        outline = Polygon(box)
        box, short_side = mini_box(round_offset(box, outline.area * params.unclip_ratio / outline.length))
        if short_side < params.min_size + 2:
            continue
        box[:, 0] = np.clip(np.round(box[:, 0] / width * src_w), 0, src_w)
        box[:, 1] = np.clip(np.round(box[:, 1] / height * src_h), 0, src_h)
        boxes.append(box.astype(np.int32))
        scores.append(score)
    return np.array(boxes, dtype=np.int32).reshape(-1, 4, 2), scores


def filter_det_boxes(boxes, src_h: int, src_w: int) -> np.ndarray:
    """The detector's last step in PaddleOCR (``filter_tag_det_res``): each box's corners re-ordered
    TL, TR, BR, BL (the two left-most by x, then each pair by y), clipped into the image as whole
    pixels (0..w-1, 0..h-1), and boxes whose top or left side is 3 px or shorter dropped; float32
    [K, 4, 2], the boxes PaddleOCR crops from."""
    boxes = np.asarray(boxes, dtype=np.float32)
    if boxes.size == 0:
        return np.zeros((0, 4, 2), np.float32)
    if boxes.ndim != 3 or boxes.shape[1:] != (4, 2) or not np.isfinite(boxes).all():
        raise DataError(f"filter_det_boxes takes finite boxes [K, 4, 2], got shape {list(boxes.shape)}")
    kept = []
    for box in boxes:
        by_x = box[np.argsort(box[:, 0], kind="stable")]
        left = by_x[:2][np.argsort(by_x[:2, 1], kind="stable")]
        right = by_x[2:][np.argsort(by_x[2:, 1], kind="stable")]
        box = np.stack([left[0], right[0], right[1], left[1]])
        box = np.trunc(np.clip(box, 0, [src_w - 1, src_h - 1])).astype(np.float32)
        if int(np.linalg.norm(box[0] - box[1])) > 3 and int(np.linalg.norm(box[0] - box[3])) > 3:
            kept.append(box)
    return np.array(kept, dtype=np.float32).reshape(-1, 4, 2)
