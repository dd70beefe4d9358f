"""Plane geometry for text boxes, with the libraries PaddleOCR uses: OpenCV (minimum-area
rectangles, polygon fill, perspective transforms and warps) and pyclipper (rounded polygon offsets).

The same calls as PaddleOCR / RapidOCR give the same boxes and crops bit for bit: the detection and
recognition models were trained on what these produce. The hand-written versions they replace were
slower on every function and differed in corner order and in 1-level pixel rounding.
"""

from __future__ import annotations

import cv2
import numpy as np
import pyclipper


def min_area_rect(points: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(4 corners float32 [4, 2], width, height) of the smallest rectangle around ``points`` [N, 2]
    (``cv2.minAreaRect`` + ``cv2.boxPoints``); integer points stay integers, as OpenCV's hull differs by type."""
    pts = np.asarray(points)
    pts = pts.astype(np.int32 if np.issubdtype(pts.dtype, np.integer) else np.float32).reshape(-1, 1, 2)
    rect = cv2.minAreaRect(pts)
    return cv2.boxPoints(rect), float(rect[1][0]), float(rect[1][1])


def order_corners(corners: np.ndarray) -> np.ndarray:
    """Top-left, top-right, bottom-right, bottom-left, by PaddleOCR's rule (``get_mini_boxes``): the
    two left-most corners (stable sort by x) give TL/BL, the two right-most TR/BR, the upper of each
    pair on top; on a tie in y the later corner of the pair goes on top."""
    pts = np.asarray(corners)[np.argsort(np.asarray(corners)[:, 0], kind="stable")]
    left = (0, 1) if pts[1, 1] > pts[0, 1] else (1, 0)
    right = (2, 3) if pts[3, 1] > pts[2, 1] else (3, 2)
    return pts[[left[0], right[0], right[1], left[1]]]


def mini_box(points: np.ndarray) -> tuple[np.ndarray, float]:
    """The ordered minimum-area rectangle of ``points`` and its shorter side."""
    corners, w, h = min_area_rect(points)
    return order_corners(corners), min(w, h)


def round_offset(polygon: np.ndarray, delta: float) -> np.ndarray:
    """``polygon`` grown by ``delta`` with rounded corners (pyclipper ``JT_ROUND``, closed polygon;
    Clipper truncates the input to integers and returns integer points), as int64 [K, 2]. This is
    DB's "unclip"; a negative ``delta`` shrinks, and a polygon shrunk away returns no points."""
    offset = pyclipper.PyclipperOffset()
    offset.AddPath(np.asarray(polygon), pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    paths = offset.Execute(delta)
    return np.concatenate([np.asarray(p, dtype=np.int64) for p in paths]) if paths else np.zeros((0, 2), np.int64)


def polygon_mask(polygon: np.ndarray, height: int, width: int) -> np.ndarray:
    """Boolean [height, width] mask of ``polygon`` (its points truncated to int32, border included),
    as ``cv2.fillPoly`` draws it."""
    mask = np.zeros((height, width), dtype=np.uint8)
    cv2.fillPoly(mask, [np.asarray(polygon).reshape(-1, 1, 2).astype(np.int32)], 1)
    return mask.astype(bool)


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 projective map taking the four ``src`` points to the four ``dst`` points
    (``cv2.getPerspectiveTransform`` on float32 points, as PaddleOCR's crops compute it)."""
    return cv2.getPerspectiveTransform(np.asarray(src, dtype=np.float32), np.asarray(dst, dtype=np.float32))


def warp_perspective(img: np.ndarray, matrix: np.ndarray, width: int, height: int) -> np.ndarray:
    """Output pixel (x, y) sampled bicubically at ``matrix^-1 @ (x, y, 1)`` of ``img``, edges
    replicated: ``cv2.warpPerspective(..., INTER_CUBIC, BORDER_REPLICATE)`` as PaddleOCR's crops."""
    return cv2.warpPerspective(
        img, matrix, (int(width), int(height)), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
