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

from paddlectl.framework.errors import DataError


def checked_points(points, what: str, count: int | None = None) -> np.ndarray:
    """``points`` as an [N, 2] array of finite numbers (its dtype kept: OpenCV treats integers
    differently), N >= 1 or exactly ``count``; DataError naming ``what`` otherwise."""
    pts = np.asarray(points)
    if pts.ndim == 3 and pts.shape[1] == 1:
        pts = pts[:, 0]  # OpenCV's contour layout [N, 1, 2]
    wanted = f"{count} [x, y] points" if count else "[x, y] points"
    if (
        pts.dtype.kind not in "iuf"
        or pts.ndim != 2
        or pts.shape[1] != 2
        or len(pts) < 1
        or count not in (None, len(pts))
    ):
        raise DataError(f"{what} takes {wanted}, got shape {list(pts.shape)} dtype {pts.dtype}")
    if not np.isfinite(pts).all():
        raise DataError(f"{what} got NaN or infinite coordinates")
    return pts


def min_area_rect(points: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(4 corners float32 [4, 2], width, height) of the smallest rectangle around ``points`` [N, 2]
    (``cv2.minAreaRect`` + ``cv2.boxPoints``); integer points stay integers, as OpenCV's hull differs by type."""
    pts = checked_points(points, "min_area_rect")
    pts = pts.astype(np.int32 if pts.dtype.kind in "iu" else np.float32).reshape(-1, 1, 2)
    rect = cv2.minAreaRect(pts)
    return cv2.boxPoints(rect), float(rect[1][0]), float(rect[1][1])


def order_corners(corners: np.ndarray) -> np.ndarray:
    """Top-left, top-right, bottom-right, bottom-left, by PaddleOCR's rule (``get_mini_boxes``): the
    two left-most corners (stable sort by x) give TL/BL, the two right-most TR/BR, the upper of each
    pair on top; on a tie in y the later corner of the pair goes on top."""
    pts = checked_points(corners, "order_corners", 4)
    pts = pts[np.argsort(pts[:, 0], kind="stable")]
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
    offset.AddPath(checked_points(polygon, "round_offset"), pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    paths = offset.Execute(delta)
    return np.concatenate([np.asarray(p, dtype=np.int64) for p in paths]) if paths else np.zeros((0, 2), np.int64)


def polygon_mask(polygon: np.ndarray, height: int, width: int) -> np.ndarray:
    """Boolean [height, width] mask of ``polygon`` (its points truncated to int32, border included),
    as ``cv2.fillPoly`` draws it."""
    mask = np.zeros((height, width), dtype=np.uint8)
    cv2.fillPoly(mask, [checked_points(polygon, "polygon_mask").reshape(-1, 1, 2).astype(np.int32)], 1)
    return mask.astype(bool)


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 projective map taking the four ``src`` points to the four ``dst`` points
    (``cv2.getPerspectiveTransform`` on float32 points, as PaddleOCR's crops compute it)."""
    src, dst = checked_points(src, "homography src", 4), checked_points(dst, "homography dst", 4)
    return cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))


def warp_perspective(img: np.ndarray, matrix: np.ndarray, width: int, height: int) -> np.ndarray:
    """Output pixel (x, y) sampled bicubically at ``matrix^-1 @ (x, y, 1)`` of ``img``, edges
    replicated: ``cv2.warpPerspective(..., INTER_CUBIC, BORDER_REPLICATE)`` as PaddleOCR's crops."""
    img, matrix = np.asarray(img), np.asarray(matrix)
    if img.ndim not in (2, 3) or min(img.shape[:2]) < 1 or matrix.shape != (3, 3) or min(int(width), int(height)) < 1:
        raise DataError(
            f"warp_perspective takes an HxW(xC) image, a 3x3 matrix and a positive size, got image "
            f"{list(img.shape)}, matrix {list(matrix.shape)}, size {width}x{height}"
        )
    return cv2.warpPerspective(
        img, matrix, (int(width), int(height)), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
