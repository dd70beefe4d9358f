"""Geometry helpers (OpenCV / pyclipper as PaddleOCR calls them): rectangles, PaddleOCR's corner
order, rounded offsets, polygon masks, perspective transforms and warps."""

from __future__ import annotations

import numpy as np
import pytest

from paddlectl.framework.errors import DataError
from paddlectl.ocr.geometry import (
    homography,
    min_area_rect,
    mini_box,
    order_corners,
    polygon_mask,
    round_offset,
    warp_perspective,
)


def test_mini_box_of_a_tilted_line():
    # the outline of a 40 x 12 line tilted by -25 degrees about (60, 40), as integer pixels
    angle = np.deg2rad(-25)
    u, v = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    outline = np.array([[60, 40] + s * u + t * v for s in (-20, 20) for t in (-6, 6)])
    corners, w, h = min_area_rect(outline)
    assert sorted([w, h]) == pytest.approx([12, 40], abs=1e-3) and corners.dtype == np.float32
    box, short = mini_box(outline)
    assert short == pytest.approx(12, abs=1e-3)
    # rising to the right: TL is the upper left corner, the top edge runs along u
    np.testing.assert_allclose(box[0], [60, 40] - 20 * u - 6 * v, atol=1e-3)
    np.testing.assert_allclose(box[1] - box[0], 40 * u, atol=1e-3)
    np.testing.assert_allclose(box[3] - box[0], 12 * v, atol=1e-3)


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


def test_round_offset_grows_a_truncated_box_with_rounded_corners():
    box = np.array([[10.7, 5.2], [30.9, 5.2], [30.9, 15.6], [10.7, 15.6]])  # truncated to (10, 5)-(30, 15)
    grown = round_offset(box, 4.0).astype(np.float64)
    assert round_offset(box, 4.0).dtype == np.int64
    # straight sides moved out by 4, corners on arcs of radius 4 (arc error <= 0.25, points rounded)
    assert grown.min(axis=0).tolist() == [6, 1] and grown.max(axis=0).tolist() == [34, 19]
    nearest = np.stack([np.clip(grown[:, 0], 10, 30), np.clip(grown[:, 1], 5, 15)], axis=1)
    assert np.all(np.abs(np.hypot(*(grown - nearest).T) - 4.0) <= 0.25 + 0.5 * np.sqrt(2))
    assert len(grown) > 8  # each corner is several points, not a mitre
    # shrinking: each side moves in by 2; shrunk away: no points
    assert sorted(map(tuple, round_offset(box, -2).tolist())) == [(12, 7), (12, 13), (28, 7), (28, 13)]
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


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: min_area_rect(np.zeros((0, 2))), r"min_area_rect takes \[x, y\] points, got shape \[0, 2\]"),
        (lambda: min_area_rect([[np.nan, 1.0]]), "NaN"),
        (lambda: order_corners(np.zeros((3, 2))), "order_corners takes 4"),
        (lambda: round_offset(np.zeros(2), 1.0), r"round_offset takes \[x, y\] points, got shape \[2\]"),
        (lambda: polygon_mask([["a", "b"]], 3, 3), "polygon_mask takes"),
        (lambda: homography(np.zeros((3, 2)), np.zeros((4, 2))), "homography src takes 4"),
        (lambda: warp_perspective(np.zeros((4, 4, 3), np.uint8), np.eye(3), 0, 5), "positive size"),
        (lambda: warp_perspective(np.zeros((0, 4, 3), np.uint8), np.eye(3), 4, 5), r"image \[0, 4, 3\]"),
    ],
)
def test_bad_input_is_a_data_error(call, message):
    with pytest.raises(DataError, match=message):
        call()
