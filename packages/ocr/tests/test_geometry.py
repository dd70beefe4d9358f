"""Geometry helpers (OpenCV / pyclipper as PaddleOCR calls them): rectangles, PaddleOCR's corner
order, rounded offsets, polygon masks, perspective transforms and warps."""

from __future__ import annotations

import numpy as np
import pytest

from paddlectl.ocr.geometry import (
    homography,
    min_area_rect,
    mini_box,
    order_corners,
    polygon_mask,
    round_offset,
    warp_perspective,
)


def test_min_area_rect_of_a_rotated_rectangle():
    angle = np.deg2rad(20)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    pts = np.array([a * u + b * v for a in np.linspace(0, 30, 16) for b in np.linspace(0, 8, 5)]) + 50
    corners, w, h = min_area_rect(pts)
    assert sorted([w, h]) == pytest.approx([8, 30], abs=1e-4)
    box, short = mini_box(pts)
    assert short == pytest.approx(8, abs=1e-4)
    # TL is the upper of the two left-most corners, TR/BR the right pair: the top edge runs along u
    assert box[0][0] < box[1][0] and box[3][0] < box[2][0] and box[0][1] < box[3][1] and box[1][1] < box[2][1]
    np.testing.assert_allclose(box[1] - box[0], 30 * u, atol=1e-3)


def test_order_corners_follows_paddleocrs_tie_rule():
    # an upright square as cv2.boxPoints lists it (BL, TL, TR, BR): plain TL, TR, BR, BL
    square = np.array([[0, 10], [0, 0], [10, 0], [10, 10]], np.float32)
    assert order_corners(square).tolist() == [[0, 0], [10, 0], [10, 10], [0, 10]]
    # a diamond (45 degrees): left pair (0, 5), (5, 0) -> TL (5, 0); right pair (5, 10), (10, 5) -> TR (10, 5)
    diamond = np.array([[5, 0], [10, 5], [5, 10], [0, 5]], np.float32)
    assert order_corners(diamond).tolist() == [[5, 0], [10, 5], [5, 10], [0, 5]]
    # equal y within a pair: the later corner of the pair goes on top
    flat = np.array([[0, 0], [1, 0], [2, 0], [3, 0]], np.float32)
    assert order_corners(flat).tolist() == [[1, 0], [3, 0], [2, 0], [0, 0]]


def test_round_offset_is_clippers_polygon():
    box = np.array([[10.7, 5.2], [50.9, 5.2], [50.9, 15.6], [10.7, 15.6]])
    grown = round_offset(box, 3.3)
    # the input truncated to (10, 5)-(50, 15), grown by 3.3 with arcs of at most 0.25 px error, rounded
    expected = [
        [52, 3],
        [53, 5],
        [53, 15],
        [52, 17],
        [50, 18],
        [10, 18],
        [8, 17],
        [7, 15],
        [7, 5],
        [8, 3],
        [10, 2],
        [50, 2],
    ]
    assert grown.dtype == np.int64
    assert sorted(map(tuple, grown.tolist())) == sorted(map(tuple, expected))
    # shrinking: each side moves in by 2; shrunk away: no points
    assert sorted(map(tuple, round_offset(box, -2).tolist())) == [(12, 7), (12, 13), (48, 7), (48, 13)]
    assert round_offset(box, -6).shape == (0, 2)


def test_polygon_mask_includes_the_border_and_truncates():
    mask = polygon_mask(np.array([[1, 1], [4, 1], [4, 3], [1, 3]]), 5, 6)
    assert mask.sum() == 4 * 3 and mask[1, 1] and mask[3, 4] and not mask[0, 0]
    assert np.array_equal(polygon_mask(np.array([[1.9, 1.9], [4.9, 1.9], [4.9, 3.9], [1.9, 3.9]]), 5, 6), mask)
    triangle = polygon_mask(np.array([[0, 0], [4, 0], [0, 4]]), 5, 5)
    assert triangle.sum() == 5 + 4 + 3 + 2 + 1 and triangle[0, 4] and not triangle[4, 4]


def test_homography_maps_the_corners():
    src = np.array([[10, 20], [110, 25], [105, 60], [8, 55]], np.float64)
    dst = np.array([[0, 0], [100, 0], [100, 40], [0, 40]], np.float64)
    m = homography(src, dst)
    mapped = (m @ np.c_[src, np.ones(4)].T).T
    np.testing.assert_allclose(mapped[:, :2] / mapped[:, 2:], dst, atol=1e-6)


def test_warp_perspective_copies_rotates_and_replicates_edges():
    img = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    corners = np.array([[0, 0], [8, 0], [8, 6], [0, 6]], np.float64)
    np.testing.assert_array_equal(warp_perspective(img, homography(corners, corners), 8, 6), img)
    # a quarter turn on pixel centres: input (x, y) -> output (y, 7 - x), exact at integer positions
    centres = np.array([[0, 0], [7, 0], [7, 5], [0, 5]], np.float64)
    turned = np.array([[0, 7], [0, 0], [5, 0], [5, 7]], np.float64)
    np.testing.assert_array_equal(warp_perspective(img, homography(centres, turned), 6, 8), np.rot90(img))
    # sampling left of the image repeats the first column
    shifted = corners - [3, 0]
    out = warp_perspective(img, homography(corners, shifted + [6, 0]), 8, 6)
    assert (out[:, :3] == img[:, :1]).all()
