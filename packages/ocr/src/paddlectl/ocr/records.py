"""PaddleOCR 3.x's OCR result, one JSON object per image or PDF page, and the review entries.

``dt_polys`` are every detected box; ``rec_polys``/``rec_texts``/``rec_scores`` the lines kept
(recognition score at least the text score); ``rec_boxes`` each kept polygon's axis-aligned
``[x_min, y_min, x_max, y_max]``; ``page_index`` is None for an image file.
"""

from __future__ import annotations

from .pipeline import PageResult
from .sources import Source


def axis_box(poly: list) -> list[int]:
    xs, ys = [int(p[0]) for p in poly], [int(p[1]) for p in poly]
    return [min(xs), min(ys), max(xs), max(ys)]


def record(source: Source, result: PageResult) -> dict:
    return {
        "input_path": str(source.path),
        "page_index": source.page_index,
        "dt_polys": result.dt_polys,
        "rec_texts": [line.text for line in result.lines],
        "rec_scores": [line.score for line in result.lines],
        "rec_polys": [line.box for line in result.lines],
        "rec_boxes": [axis_box(line.box) for line in result.lines],
    }


def review_entries(rec: dict, min_score: float) -> list[dict]:
    """The record's lines scoring under ``min_score``, each with its source and coordinates, for a
    person to check."""
    return [
        {
            "input_path": rec["input_path"],
            "page_index": rec["page_index"],
            "line_index": i,
            "text": text,
            "score": score,
            "poly": poly,
            "box": box,
        }
        for i, (text, score, poly, box) in enumerate(
            zip(rec["rec_texts"], rec["rec_scores"], rec["rec_polys"], rec["rec_boxes"], strict=True)
        )
        if score < min_score
    ]
