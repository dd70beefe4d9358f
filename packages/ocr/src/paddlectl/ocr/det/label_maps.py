"""DB's training targets from text polygons, with pyclipper and shapely as PaddleOCR builds them.

- ``MakeShrinkMap``: each polygon shrunk inward by ``D = A (1 - r^2) / L`` (area ``A``,
  perimeter ``L``, ratio ``r`` = 0.4) and filled with 1 in the shrink map; polygons that are
  ignored (``###``), smaller than ``min_text_size`` or that vanish when shrunk are zeroed in the
  mask instead, so the loss neither rewards nor punishes them. If the offset splits a polygon,
  PaddleOCR retries with a larger ratio (0.8); so does this.
- ``MakeBorderMap``: each kept polygon grown outward by ``D``; inside the grown polygon the
  mask is 1 and the map is ``1 - min(distance to an edge / D, 1)``, then scaled into
  ``[thresh_min, thresh_max]``. The distance to an edge follows PaddleOCR: the distance to the
  edge's line when the pixel sees the edge at an obtuse angle (inside the circle on the edge),
  else the distance to the nearer end point.

Both are data transforms over PaddleOCR's dict (``image``, ``polys``, ``ignore_tags``).
"""

from __future__ import annotations

import cv2
import numpy as np
import pyclipper
from shapely.geometry import Polygon


def _offset(polygon: np.ndarray, distance: float) -> list[np.ndarray]:
    """The polygon offset by ``distance`` (negative shrinks) with round joins, as pyclipper returns it."""
    clipper = pyclipper.PyclipperOffset()
    clipper.AddPath([tuple(p) for p in polygon], pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    return [np.array(path).reshape(-1, 2) for path in clipper.Execute(distance)]


def _fill(canvas: np.ndarray, polygon: np.ndarray, value: float) -> None:
    cv2.fillPoly(canvas, [np.asarray(polygon).astype(np.int32)], value)


def shoelace_area(polygon: np.ndarray) -> float:
    """Signed area by the shoelace sum: negative for points clockwise on screen (y down), the way round
    PaddleOCR turns every polygon."""
    x, y = polygon[:, 0], polygon[:, 1]
    return float(np.sum((np.roll(x, -1) - x) * (np.roll(y, -1) + y)) / 2.0)


def validate_polygons(polys: np.ndarray, ignore_tags: np.ndarray, h: int, w: int):
    """Clip into the image, ignore polygons under one pixel of area, and orient the rest one way."""
    polys = [np.stack([np.clip(p[:, 0], 0, w - 1), np.clip(p[:, 1], 0, h - 1)], 1) for p in polys]
    tags = np.array(ignore_tags, dtype=bool).copy()
    for i, polygon in enumerate(polys):
        area = shoelace_area(polygon)
        if abs(area) < 1:
            tags[i] = True
        if area > 0:
            polys[i] = polygon[::-1]
    return polys, tags


def _shrink_distance(polygon: np.ndarray, ratio: float) -> float:
    shape = Polygon(polygon)
    return shape.area * (1 - ratio**2) / shape.length


class MakeShrinkMap:
    def __init__(self, min_text_size: int = 8, shrink_ratio: float = 0.4) -> None:
        self.min_text_size, self.shrink_ratio = min_text_size, shrink_ratio

    def __call__(self, data: dict) -> dict:
        h, w = data["image"].shape[:2]
        polys, tags = validate_polygons(data["polys"], data["ignore_tags"], h, w)
        gt = np.zeros((h, w), np.float32)
        mask = np.ones((h, w), np.float32)
        for i, polygon in enumerate(polys):
            size = min(np.ptp(polygon[:, 1]), np.ptp(polygon[:, 0]))
            shrunk = [] if tags[i] or size < self.min_text_size else self._shrunk(polygon)
            if not shrunk:
                _fill(mask, polygon, 0)
                tags[i] = True
            for path in shrunk:
                _fill(gt, path, 1)
        data["shrink_map"], data["shrink_mask"], data["ignore_tags"] = gt, mask, tags
        return data

    def _shrunk(self, polygon: np.ndarray) -> list[np.ndarray]:
        """The shrunk polygon(s) at the first ratio that keeps it in one piece (PaddleOCR's ratios)."""
        shrunk: list[np.ndarray] = []
        for ratio in np.arange(self.shrink_ratio, 1, self.shrink_ratio):
            shrunk = _offset(polygon, -_shrink_distance(polygon, ratio))
            if len(shrunk) == 1:
                break
        return shrunk


def edge_distance(xs: np.ndarray, ys: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from each pixel to edge ``a``-``b`` by PaddleOCR's rule (see the module docstring)."""
    da = (xs - a[0]) ** 2 + (ys - a[1]) ** 2
    db = (xs - b[0]) ** 2 + (ys - b[1]) ** 2
    ab = (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        cos_apb = (da + db - ab) / (2 * np.sqrt(da * db))  # angle at the pixel between the end points
        sin2 = np.nan_to_num(1 - cos_apb**2)
        to_line = np.sqrt(da * db * sin2 / ab)
    return np.where(cos_apb > 0, np.sqrt(np.fmin(da, db)), to_line)


class MakeBorderMap:
    def __init__(self, shrink_ratio: float = 0.4, thresh_min: float = 0.3, thresh_max: float = 0.7) -> None:
        self.shrink_ratio, self.thresh_min, self.thresh_max = shrink_ratio, thresh_min, thresh_max

    def __call__(self, data: dict) -> dict:
        h, w = data["image"].shape[:2]
        canvas = np.zeros((h, w), np.float32)
        mask = np.zeros((h, w), np.float32)
        for polygon, ignore in zip(data["polys"], data["ignore_tags"], strict=True):
            if not ignore:
                self.draw_border_map(np.array(polygon, np.float64), canvas, mask)
        data["threshold_map"] = canvas * (self.thresh_max - self.thresh_min) + self.thresh_min
        data["threshold_mask"] = mask
        return data

    def draw_border_map(self, polygon: np.ndarray, canvas: np.ndarray, mask: np.ndarray) -> None:
        shape = Polygon(polygon)
        if shape.area <= 0:
            return
        distance = _shrink_distance(polygon, self.shrink_ratio)
        grown = _offset(polygon, distance)[0]
        _fill(mask, grown, 1.0)
        # Distances only where the grown polygon meets the image: a region reaching far outside
        # (a crop's cut, a hostile label) costs no more than one inside.
        x0, y0 = np.maximum(grown.min(axis=0), 0)
        x1, y1 = np.minimum(grown.max(axis=0), (canvas.shape[1] - 1, canvas.shape[0] - 1))
        if x0 > x1 or y0 > y1:
            return
        ys, xs = np.mgrid[y0 : y1 + 1, x0 : x1 + 1].astype(np.float64)
        ends = np.roll(polygon, -1, axis=0)
        dist = np.min(
            [np.clip(edge_distance(xs, ys, a, b) / distance, 0, 1) for a, b in zip(polygon, ends, strict=True)], axis=0
        )
        window = canvas[y0 : y1 + 1, x0 : x1 + 1]
        canvas[y0 : y1 + 1, x0 : x1 + 1] = np.fmax(1 - dist, window)
