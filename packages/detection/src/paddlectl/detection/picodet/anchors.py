"""Anchor points of an anchor-free head: one per feature-map cell, at the cell's centre.

Shared by the head (decoding, inside the exported model), the loss (assignment) and the
metric, so the three can never disagree on where a prediction sits.
"""

from __future__ import annotations

import numpy as np


def grid_sizes(height: int, width: int, strides) -> list[tuple[int, int]]:
    """The ``(h, w)`` of each level's map for an input of ``height`` x ``width`` (stride-2 convs round up)."""
    return [(-(-height // s), -(-width // s)) for s in strides]


def anchor_points(height: int, width: int, strides) -> tuple[np.ndarray, np.ndarray]:
    """``(points [A, 2] as (x, y) in input pixels, stride [A])`` level by level, row-major."""
    points, stride_of = [], []
    for (h, w), s in zip(grid_sizes(height, width, strides), strides, strict=True):
        ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
        points.append(np.stack([xs.ravel() + 0.5, ys.ravel() + 0.5], 1) * s)
        stride_of.append(np.full(h * w, s, np.float32))
    return np.concatenate(points), np.concatenate(stride_of)


def distances_to_boxes(points: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """``[..., 4]`` (left, top, right, bottom) distances from ``points`` -> ``x1, y1, x2, y2``."""
    return np.concatenate([points - distances[..., :2], points + distances[..., 2:]], -1)


def boxes_to_distances(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The inverse of ``distances_to_boxes``."""
    return np.concatenate([points - boxes[..., :2], boxes[..., 2:] - points], -1)
