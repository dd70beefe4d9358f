"""``EastRandomCropData``: PaddleOCR's training crop for detection.

A crop window is drawn whose edges fall only in rows/columns no (cared-for) text crosses, so no
text line is cut; it must be at least ``min_crop_side_ratio`` of each side and hold some text
(``max_tries`` draws, else the whole image). The crop is scaled to fit ``size`` [W, H] and, with
``keep_ratio``, padded at the bottom/right; polygons follow, and those left outside are dropped.
Random draws come from the framework's generator, so ``Global.seed`` fixes them.
"""

from __future__ import annotations

import cv2
import numpy as np

from paddlectl.framework.errors import ConfigError
from paddlectl.framework.ops.random import generator


def outside(poly: np.ndarray, x: float, y: float, w: float, h: float) -> bool:
    """True when the polygon lies wholly left, right, above or below the rectangle."""
    xs, ys = poly[:, 0], poly[:, 1]
    return xs.max() < x or xs.min() > x + w or ys.max() < y or ys.min() > y + h


def free_runs(covered: np.ndarray) -> list[np.ndarray]:
    """The runs of consecutive indices where ``covered`` is 0 (positions a crop edge may take)."""
    free = np.flatnonzero(covered == 0)
    return np.split(free, np.flatnonzero(np.diff(free) != 1) + 1) if len(free) else []


def _pick_span(runs: list[np.ndarray], size: int, rng) -> tuple[int, int]:
    """Two edge positions: from two (possibly equal) free runs when there are several, else from the one."""
    if len(runs) > 1:
        values = [int(rng.choice(runs[i])) for i in rng.choice(len(runs), 2)]
    else:
        values = [int(v) for v in rng.choice(runs[0], 2)]
    return int(np.clip(min(values), 0, size - 1)), int(np.clip(max(values), 0, size - 1))


def crop_area(h: int, w: int, polys: list[np.ndarray], min_crop_side_ratio: float, max_tries: int, rng):
    """``(x, y, w, h)`` of the crop (the whole image when no valid window is found)."""
    rows, cols = np.zeros(h, np.int32), np.zeros(w, np.int32)
    for poly in polys:
        p = np.round(poly).astype(np.int32)
        cols[p[:, 0].min() : p[:, 0].max()] = 1
        rows[p[:, 1].min() : p[:, 1].max()] = 1
    row_runs, col_runs = free_runs(rows), free_runs(cols)
    if not row_runs or not col_runs:
        return 0, 0, w, h
    for _ in range(max_tries):
        x0, x1 = _pick_span(col_runs, w, rng)
        y0, y1 = _pick_span(row_runs, h, rng)
        if x1 - x0 < min_crop_side_ratio * w or y1 - y0 < min_crop_side_ratio * h:
            continue
        if any(not outside(p, x0, y0, x1 - x0, y1 - y0) for p in polys):
            return x0, y0, x1 - x0, y1 - y0
    return 0, 0, w, h


class EastRandomCropData:
    def __init__(
        self, size=(640, 640), max_tries: int = 10, min_crop_side_ratio: float = 0.1, keep_ratio: bool = True
    ) -> None:
        if not (isinstance(size, list | tuple) and len(size) == 2 and all(isinstance(s, int) and s > 0 for s in size)):
            raise ConfigError(f"EastRandomCropData.size is {size!r}; give [width, height] in pixels")
        if not 0 < min_crop_side_ratio <= 1:
            raise ConfigError(f"EastRandomCropData.min_crop_side_ratio is {min_crop_side_ratio!r}; use (0, 1]")
        self.size, self.max_tries = tuple(size), int(max_tries)
        self.min_crop_side_ratio, self.keep_ratio = float(min_crop_side_ratio), bool(keep_ratio)

    def __call__(self, data: dict) -> dict:
        image, polys, tags = data["image"], data["polys"], data["ignore_tags"]
        texts = data.get("texts") or [""] * len(polys)
        cared = [p for p, ignore in zip(polys, tags, strict=True) if not ignore]
        x, y, cw, ch = crop_area(*image.shape[:2], cared, self.min_crop_side_ratio, self.max_tries, generator())
        scale = min(self.size[0] / cw, self.size[1] / ch)
        h, w = int(ch * scale), int(cw * scale)
        window = image[y : y + ch, x : x + cw]
        if self.keep_ratio:
            out = np.zeros((self.size[1], self.size[0], *image.shape[2:]), image.dtype)
            out[:h, :w] = cv2.resize(window, (w, h)).reshape(h, w, *image.shape[2:])
            factors = (scale, scale)
        else:  # stretched to size: each axis scales on its own (PaddleOCR scales polygons by one factor here)
            (w, h), factors = self.size, (self.size[0] / cw, self.size[1] / ch)
            out = cv2.resize(window, self.size).reshape(h, w, *image.shape[2:])
        keep = [((p - (x, y)) * factors, t, g) for p, t, g in zip(polys, texts, tags, strict=True)]
        keep = [k for k in keep if not outside(k[0], 0, 0, w, h)]
        data["image"] = out
        data["polys"] = np.array([k[0] for k in keep], np.float32).reshape(-1, *polys.shape[1:])
        data["texts"] = [k[1] for k in keep]
        data["ignore_tags"] = np.array([k[2] for k in keep], dtype=bool)
        return data
