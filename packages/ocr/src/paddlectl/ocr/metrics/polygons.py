"""Text polygons for the metrics: user input checked and turned into shapely geometries, and the
pairwise overlap areas both the detection and the end-to-end metric match on."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import shapely

from paddlectl.framework.errors import DataError

DONT_CARE = "###"
"""The transcription that marks a don't-care region in PaddleOCR's det labels (unreadable text)."""


def points_of(item, what: str) -> np.ndarray:
    """One polygon as a float64 [N, 2] array (N >= 3, finite); ``item`` is the points themselves or a
    mapping with ``"points"`` (a det label entry, a prediction record)."""
    if isinstance(item, Mapping):
        if "points" not in item:
            raise DataError(f"{what} has no 'points' (keys: {sorted(item)}); pass {{'points': [[x, y], ...], ...}}")
        item = item["points"]
    try:
        pts = np.asarray(item, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{what} is not a list of [x, y] points: {item!r:.80}") from None
    if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < 3:
        raise DataError(f"{what} has shape {list(pts.shape)}; a polygon is a list of at least 3 [x, y] points")
    if not np.isfinite(pts).all():
        raise DataError(f"{what} holds NaN or infinite coordinates")
    return pts


def to_geometries(polygons: list[np.ndarray]) -> np.ndarray:
    """shapely Polygons, one per [N, 2] array."""
    return np.array([shapely.Polygon(p) for p in polygons], dtype=object).reshape(len(polygons))


def usable(geoms: np.ndarray) -> np.ndarray:
    """PaddleOCR's detection evaluator skips polygons that are not valid and simple (self-crossing)."""
    if geoms.size == 0:
        return np.zeros(0, dtype=bool)
    return shapely.is_valid(geoms) & shapely.is_simple(geoms)


def intersection_areas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[len(a), len(b)] areas of the pairwise intersections (vectorised by shapely)."""
    if a.size == 0 or b.size == 0:
        return np.zeros((a.size, b.size))
    return shapely.area(shapely.intersection(a[:, None], b[None, :]))


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[len(a), len(b)] intersection over union; 0 where the union is empty."""
    inter = intersection_areas(a, b)
    union = shapely.area(a)[:, None] + shapely.area(b)[None, :] - inter if inter.size else inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
