"""Det labels: the JSON of a label line (``img<TAB>[{"transcription": ..., "points": [[x, y], ...]}]``)
and ``DetLabelEncode``, which turns it into PaddleOCR's ``polys``/``texts``/``ignore_tags``.

``parse_det_label`` is also the dataset's ``check_label``: every line is checked when the label
file is read, so a malformed one fails at once with its file and line number.
"""

from __future__ import annotations

import json
import math

import numpy as np

IGNORED_TEXTS = ("*", "###")
MAX_COORDINATE = 1 << 20
"""Label points beyond a million pixels are refused: no image is that large, and OpenCV and
pyclipper take the coordinates as integers."""


def _point(value, where: str) -> list[float]:
    if not (isinstance(value, list) and len(value) == 2 and all(_finite(v) for v in value)):
        raise ValueError(f"{where} must be [x, y] with finite numbers within 2^20 pixels, got {value!r}")
    return [float(value[0]), float(value[1])]


def _finite(value) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and abs(value) <= MAX_COORDINATE
    )


def parse_det_label(text: str) -> list[dict]:
    """The label's regions as ``[{"transcription": str, "points": [[x, y], ...]}]`` (ValueError otherwise)."""
    try:
        regions = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the label is not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(regions, list):
        raise ValueError(f"the label must be a JSON list of regions, got {type(regions).__name__}")
    parsed = []
    for i, region in enumerate(regions):
        if not isinstance(region, dict) or "points" not in region or "transcription" not in region:
            raise ValueError(f"region {i} must be an object with 'transcription' and 'points'")
        points = region["points"]
        if not isinstance(points, list) or len(points) < 3:
            raise ValueError(f"region {i}: 'points' must list at least 3 [x, y] points")
        parsed.append(
            {
                "transcription": str(region["transcription"]),
                "points": [_point(p, f"region {i} point {j}") for j, p in enumerate(points)],
            }
        )
    return parsed


class DetLabelEncode:
    """``label`` -> ``polys`` [K, P, 2] float32, ``texts``, ``ignore_tags`` (``###`` and ``*`` are
    don't-care); shorter polygons repeat their last point up to P. No region: the sample is dropped."""

    def __call__(self, data: dict):
        regions = parse_det_label(data["label"]) if isinstance(data["label"], str) else data["label"]
        if not regions:
            return None
        boxes = [np.asarray(r["points"], np.float32) for r in regions]
        points = max(len(b) for b in boxes)
        data["polys"] = np.stack([np.concatenate([b, np.repeat(b[-1:], points - len(b), 0)]) for b in boxes])
        data["texts"] = [r["transcription"] for r in regions]
        data["ignore_tags"] = np.array([t in IGNORED_TEXTS for t in data["texts"]], dtype=bool)
        return data
