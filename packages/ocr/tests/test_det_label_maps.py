"""DB's shrink and border (threshold) maps against hand-computed cases and PaddleOCR's rules."""

from __future__ import annotations

import numpy as np
import pytest

from paddlectl.ocr.det.label_maps import MakeBorderMap, MakeShrinkMap, edge_distance, shoelace_area, validate_polygons

# A 40 x 20 box: area 800, perimeter 120, so D = 800 * (1 - 0.4^2) / 120 = 5.6.
BOX = np.array([[10, 10], [50, 10], [50, 30], [10, 30]], np.float32)
D = 800 * (1 - 0.4**2) / 120


def _sample(polys, tags, h=40, w=60):
    return {"image": np.zeros((h, w, 3), np.uint8), "polys": np.array(polys, np.float32), "ignore_tags": np.array(tags)}


def test_shrink_map_is_the_box_shrunk_by_d():
    data = MakeShrinkMap()(_sample([BOX], [False]))
    # pyclipper offsets integer coordinates and rounds: 10 + 5.6 -> 16, 50 - 5.6 -> 44, 30 - 5.6 -> 24.
    expected = np.zeros((40, 60), np.float32)
    expected[16:25, 16:45] = 1
    np.testing.assert_array_equal(data["shrink_map"], expected)
    np.testing.assert_array_equal(data["shrink_mask"], np.ones((40, 60), np.float32))
    assert not data["ignore_tags"].any()


@pytest.mark.parametrize(
    "poly, tag",
    [
        (BOX, True),  # '###': don't care
        (np.array([[10, 10], [50, 10], [50, 15], [10, 15]], np.float32), False),  # 5 px tall < min_text_size 8
        (np.array([[10, 10], [50, 10], [50, 10.5], [10, 10.5]], np.float32), False),  # area < 1 pixel
    ],
)
def test_ignored_or_tiny_regions_are_masked_out_not_taught(poly, tag):
    data = MakeShrinkMap()(_sample([poly], [tag]))
    assert data["shrink_map"].sum() == 0
    x0, y0 = poly.min(axis=0).astype(int)
    x1, y1 = poly.max(axis=0).astype(int)
    assert (data["shrink_mask"][y0 : y1 + 1, x0 : x1 + 1] == 0).all()
    assert data["shrink_mask"][y1 + 3 :, :].all()
    assert data["ignore_tags"].all()


def test_border_map_values_by_hand():
    data = MakeBorderMap()(_sample([BOX], [False]))
    t, m = data["threshold_map"], data["threshold_mask"]
    assert t[20, 10] == pytest.approx(0.7)  # on the left edge: distance 0 -> thresh_max
    assert t[20, 5] == pytest.approx(0.3 + 0.4 * (1 - 5 / D), abs=1e-6)  # 5 px outside
    assert t[20, 13] == pytest.approx(0.3 + 0.4 * (1 - 3 / D), abs=1e-6)  # 3 px inside
    assert t[20, 30] == pytest.approx(0.3)  # 10 px from every edge > D: thresh_min
    assert t[2, 2] == pytest.approx(0.3)  # outside the grown box
    # The mask is the box grown by D (pyclipper: 10 - 5.6 -> 4, 50 + 5.6 -> 56), rounded corners.
    assert m[20, 4] == 1 and m[20, 56] == 1 and m[20, 3] == 0 and m[20, 57] == 0
    assert m[4, 4] == 0  # the round join cuts the corner
    assert m[4, 30] == 1 and m[36, 30] == 1 and m[3, 30] == 0


def test_border_map_skips_ignored_regions():
    data = MakeBorderMap()(_sample([BOX], [True]))
    assert data["threshold_mask"].sum() == 0
    np.testing.assert_allclose(data["threshold_map"], 0.3)


def test_edge_distance_follows_paddleocr_rule():
    a, b = np.array([0.0, 0.0]), np.array([10.0, 0.0])
    xs, ys = np.array([[5.0, 5.0, -3.0, 0.0]]), np.array([[4.0, 6.0, 4.0, 0.0]])
    d = edge_distance(xs, ys, a, b)[0]
    # (5, 4) sees the edge at an obtuse angle: distance to the line, 4.
    # (5, 6) sees it at an acute angle (outside the circle on the edge): nearer end point, sqrt(61).
    # (-3, 4): beyond the end, 5. On an end point: 0.
    np.testing.assert_allclose(d, [4.0, np.sqrt(61.0), 5.0, 0.0])


def test_validate_polygons_clips_orients_and_drops_slivers():
    ccw = BOX[::-1].copy()  # counter-clockwise in image coordinates
    outside = BOX + 100
    polys, tags = validate_polygons([BOX, ccw, outside], [False, False, False], 40, 60)
    assert shoelace_area(BOX) < 0 < shoelace_area(ccw)
    assert shoelace_area(polys[0]) < 0 and shoelace_area(polys[1]) < 0  # both end up the same way round
    assert polys[2][:, 0].max() == 59 and polys[2][:, 1].max() == 39
    assert list(tags) == [False, False, True]  # clipped to a point: area 0


def test_regions_reaching_far_outside_cost_only_their_part_in_the_image():
    wide = np.array([[-1e6, 10], [1e6, 10], [1e6, 30], [-1e6, 30]], np.float32)  # 2M x 40 px: gigabytes whole
    data = MakeBorderMap()(_sample([wide], [False]))
    t = data["threshold_map"]
    assert t[10, 30] == pytest.approx(0.7) and t[20, 30] == pytest.approx(0.3)  # on the edge; 10 px > D inside
    assert data["threshold_mask"][5, :].all() and not data["threshold_mask"][0, :].any()
