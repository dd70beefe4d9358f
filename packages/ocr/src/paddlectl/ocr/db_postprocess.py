"""DB (Differentiable Binarization) post-processing: the detector's probability map -> text boxes.

Same steps and defaults as PaddleOCR / RapidOCR's ``DBPostProcess`` (thresh 0.3, box_thresh 0.5,
unclip_ratio 1.6, 2x2 dilation, "fast" box score, min side 3): binarise, dilate, take each
connected region, fit its minimum-area rectangle, score it by the mean probability inside, grow
it by ``area * unclip_ratio / perimeter`` and map it back to the source image.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .geometry import min_area_rect, order_corners, polygon_mask, round_offset


@dataclass(frozen=True)
class DBParams:
    thresh: float = 0.3
    box_thresh: float = 0.5
    max_candidates: int = 1000
    unclip_ratio: float = 1.6
    use_dilation: bool = True
    min_size: int = 3


@numba.njit(cache=True)
def _label(mask):
    """8-connected component labels (0 = background), in raster order of first pixel."""
    h, w = mask.shape
    labels = np.zeros((h, w), np.int32)
    stack = np.empty((h * w, 2), np.int32)
    n = 0
    for y in range(h):
        for x in range(w):
            if mask[y, x] and labels[y, x] == 0:
                n += 1
                labels[y, x] = n
                top = 0
                stack[0, 0] = y
                stack[0, 1] = x
                top = 1
                while top > 0:
                    top -= 1
                    cy = stack[top, 0]
                    cx = stack[top, 1]
                    for dy in range(-1, 2):
                        for dx in range(-1, 2):
                            ny = cy + dy
                            nx = cx + dx
                            if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and labels[ny, nx] == 0:
                                labels[ny, nx] = n
                                stack[top, 0] = ny
                                stack[top, 1] = nx
                                top += 1
    return labels, n


def _dilate2x2(mask: np.ndarray) -> np.ndarray:
    """OpenCV's dilation with a 2x2 kernel (anchor at its centre = top-left offset): a pixel is set
    when it or its up/left/up-left neighbour is."""
    out = mask.copy()
    out[1:, :] |= mask[:-1, :]
    out[:, 1:] |= mask[:, :-1]
    out[1:, 1:] |= mask[:-1, :-1]
    return out


def _region_points(ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """The leftmost and rightmost pixel of each row: enough for the region's convex hull."""
    order = np.lexsort((xs, ys))
    ys, xs = ys[order], xs[order]
    first = np.r_[True, ys[1:] != ys[:-1]]
    last = np.r_[ys[1:] != ys[:-1], True]
    return np.concatenate([np.stack([xs[first], ys[first]], 1), np.stack([xs[last], ys[last]], 1)]).astype(np.float64)


def _box_score(prob: np.ndarray, box: np.ndarray) -> float:
    h, w = prob.shape
    x0, x1 = (int(np.clip(f(box[:, 0]), 0, w - 1)) for f in (lambda a: np.floor(a.min()), lambda a: np.ceil(a.max())))
    y0, y1 = (int(np.clip(f(box[:, 1]), 0, h - 1)) for f in (lambda a: np.floor(a.min()), lambda a: np.ceil(a.max())))
    local = np.trunc(box) - np.array([x0, y0])  # fillPoly takes the corners as int32
    mask = polygon_mask(local, y1 - y0 + 1, x1 - x0 + 1)
    return float(prob[y0 : y1 + 1, x0 : x1 + 1][mask].mean()) if mask.any() else 0.0


def boxes_from_probability(prob: np.ndarray, src_h: int, src_w: int, params: DBParams = DBParams()):
    """Boxes (int32 [K, 4, 2], corners TL, TR, BR, BL in source pixels) and their scores for one
    probability map [H, W]."""
    height, width = prob.shape
    mask = prob > params.thresh
    if params.use_dilation:
        mask = _dilate2x2(mask)
    labels, n = _label(mask)
    boxes, scores = [], []
    ys_all, xs_all = np.nonzero(labels)
    ids = labels[ys_all, xs_all]
    order = np.argsort(ids, kind="stable")
    bounds = np.searchsorted(ids[order], np.arange(1, n + 2))
    for k in range(min(n, params.max_candidates)):
        sel = order[bounds[k] : bounds[k + 1]]
        corners, w, h = min_area_rect(_region_points(ys_all[sel], xs_all[sel]))
        if min(w, h) < params.min_size:
            continue
        box = order_corners(corners)
        score = _box_score(prob, box)
        if score < params.box_thresh:
            continue
        area, perimeter = w * h, 2 * (w + h)
        corners, w, h = min_area_rect(round_offset(box, area * params.unclip_ratio / perimeter))
        if min(w, h) < params.min_size + 2:
            continue
        box = order_corners(corners)
        box[:, 0] = np.clip(np.round(box[:, 0] / width * src_w), 0, src_w)
        box[:, 1] = np.clip(np.round(box[:, 1] / height * src_h), 0, src_h)
        boxes.append(box.astype(np.int32))
        scores.append(score)
    return np.array(boxes, dtype=np.int32).reshape(-1, 4, 2), scores
