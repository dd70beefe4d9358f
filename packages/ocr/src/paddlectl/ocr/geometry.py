"""Plane geometry for text boxes without OpenCV/shapely: convex hull, minimum-area rectangle,
corner ordering and polygon masks, on (x, y) float arrays."""

from __future__ import annotations

import numpy as np


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Andrew's monotone chain; counter-clockwise hull without repeated points."""
    pts = np.unique(np.asarray(points, dtype=np.float64), axis=0)
    if len(pts) <= 2:
        return pts

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2:
                (ax, ay), (bx, by) = out[-2], out[-1]
                if (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) > 0:
                    break
                out.pop()
            out.append(tuple(p))
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1])


def min_area_rect(points: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(4 corners, width, height) of the smallest enclosing rectangle (rotating calipers: one side
    lies on a hull edge); width runs along that edge."""
    hull = convex_hull(points)
    if len(hull) == 1:
        return np.repeat(hull, 4, axis=0), 0.0, 0.0
    best = None
    for i in range(len(hull)):
        edge = hull[(i + 1) % len(hull)] - hull[i]
        norm = np.hypot(*edge)
        if norm == 0:
            continue
        u = edge / norm
        v = np.array([-u[1], u[0]])
        pu, pv = hull @ u, hull @ v
        w, h = pu.max() - pu.min(), pv.max() - pv.min()
        if best is None or w * h < best[0] - 1e-9:
            best = (w * h, u, v, pu.min(), pu.max(), pv.min(), pv.max())
    _, u, v, u0, u1, v0, v1 = best
    corners = np.array([u0 * u + v0 * v, u1 * u + v0 * v, u1 * u + v1 * v, u0 * u + v1 * v])
    return corners, float(u1 - u0), float(v1 - v0)


def order_corners(corners: np.ndarray) -> np.ndarray:
    """PaddleOCR's corner order: top-left, top-right, bottom-right, bottom-left (by x, then y)."""
    pts = sorted(np.asarray(corners, dtype=np.float64).tolist(), key=lambda p: p[0])
    left = sorted(pts[:2], key=lambda p: p[1])
    right = sorted(pts[2:], key=lambda p: p[1])
    return np.array([left[0], right[0], right[1], left[1]])


def _round_half_away(v: float) -> int:
    return int(v - 0.5) if v < 0 else int(v + 0.5)


def round_offset(polygon: np.ndarray, delta: float, arc_tolerance: float = 0.25) -> np.ndarray:
    """A convex polygon grown by ``delta`` with rounded corners, on integer coordinates: the
    polygon DB's "unclip" gets from Clipper (``JT_ROUND``, the input truncated to integers, each
    corner's arc in steps of at most ``2*pi/steps`` with ``steps = pi / acos(1 - tol/delta)``,
    points rounded half away from zero)."""
    pts = np.trunc(np.asarray(polygon, dtype=np.float64))
    pts = pts[np.r_[True, np.any(np.diff(pts, axis=0) != 0, axis=1)]]
    if len(pts) > 1 and np.all(pts[0] == pts[-1]):
        pts = pts[:-1]
    area2 = np.sum(pts[:, 0] * np.roll(pts[:, 1], -1) - np.roll(pts[:, 0], -1) * pts[:, 1])
    if area2 < 0:
        pts = pts[::-1]  # counter-clockwise (y up): outward normal of edge (dx, dy) is (dy, -dx)
    n = len(pts)
    edges = np.roll(pts, -1, axis=0) - pts
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.where(lengths > 0, lengths, 1)[:, None]
    steps = np.pi / np.arccos(1 - arc_tolerance / abs(delta)) if abs(delta) > arc_tolerance else 1.0
    steps = min(steps, abs(delta) * np.pi)
    per_rad = steps / (2 * np.pi)
    step = 2 * np.pi / steps
    out = []
    for j in range(n):
        before, after = normals[j - 1], normals[j]
        angle = np.arctan2(before[0] * after[1] - before[1] * after[0], before @ after)
        count = max(_round_half_away(per_rad * abs(angle)), 1)
        x, y = before
        for _ in range(count):
            out.append((_round_half_away(pts[j][0] + x * delta), _round_half_away(pts[j][1] + y * delta)))
            x, y = x * np.cos(step) - y * np.sin(step), x * np.sin(step) + y * np.cos(step)
        out.append((_round_half_away(pts[j][0] + after[0] * delta), _round_half_away(pts[j][1] + after[1] * delta)))
    return np.array(out, dtype=np.float64)


def polygon_mask(polygon: np.ndarray, height: int, width: int) -> np.ndarray:
    """Boolean mask of the pixel centres inside (or on) a convex polygon given in pixel units."""
    ys, xs = np.mgrid[0:height, 0:width]
    inside = np.ones((height, width), dtype=bool)
    poly = np.asarray(polygon, dtype=np.float64)
    area2 = np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
    sign = 1.0 if area2 >= 0 else -1.0
    for i in range(len(poly)):
        (ax, ay), (bx, by) = poly[i], poly[(i + 1) % len(poly)]
        inside &= sign * ((bx - ax) * (ys - ay) - (by - ay) * (xs - ax)) >= -1e-9
    return inside


def homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3x3 projective map taking the four ``src`` points to the four ``dst`` points."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(np.asarray(src, np.float64), np.asarray(dst, np.float64), strict=True):
        rows += [[x, y, 1, 0, 0, 0, -u * x, -u * y], [0, 0, 0, x, y, 1, -v * x, -v * y]]
        rhs += [u, v]
    h = np.linalg.solve(np.array(rows), np.array(rhs))
    return np.append(h, 1.0).reshape(3, 3)


def _cubic_weights(t: np.ndarray, a: float = -0.75) -> np.ndarray:
    """Keys' cubic convolution weights (OpenCV's a = -0.75) for taps at -1, 0, 1, 2."""
    d = np.stack([t + 1, t, 1 - t, 2 - t], axis=-1)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, far)


def warp_perspective(img: np.ndarray, matrix: np.ndarray, width: int, height: int) -> np.ndarray:
    """Output pixel (x, y) sampled bicubically at ``matrix^-1 @ (x, y, 1)`` of ``img`` (HWC uint8),
    edges replicated: OpenCV's ``warpPerspective(..., INTER_CUBIC, BORDER_REPLICATE)``."""
    inv = np.linalg.inv(matrix)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    p = inv @ np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)])
    sx, sy = p[0] / p[2], p[1] / p[2]
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    wx, wy = _cubic_weights(sx - x0), _cubic_weights(sy - y0)
    h, w = img.shape[:2]
    src = img.astype(np.float64)
    out = np.zeros((xs.size, img.shape[2]))
    for i in range(4):
        yi = np.clip(y0 + i - 1, 0, h - 1)
        for j in range(4):
            xj = np.clip(x0 + j - 1, 0, w - 1)
            out += src[yi, xj] * (wy[:, i] * wx[:, j])[:, None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8).reshape(height, width, img.shape[2])
