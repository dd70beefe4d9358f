"""PaddleX detection records from deploy rows, their JSON file and the drawn picture."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from paddlectl.detection.records import draw, record, write_json, write_picture
from paddlectl.framework.errors import DataError, ShapeError

LABELS = ["text", "title"]
ROWS = np.array([[1, 0.9, 10, 20, 110, 60], [0, 0.6, 5.5, 70, 190, 180]], np.float32)


def test_record_is_paddlex_shaped():
    rec = record("page.png", ROWS, LABELS)
    assert rec["input_path"] == "page.png"
    assert [b["label"] for b in rec["boxes"]] == ["title", "text"]
    first = rec["boxes"][0]
    assert set(first) == {"cls_id", "label", "score", "coordinate"}
    assert first["cls_id"] == 1 and first["score"] == pytest.approx(0.9) and first["coordinate"] == [10, 20, 110, 60]
    assert record("empty.png", np.zeros((0, 6)), LABELS)["boxes"] == []


def test_bad_rows_are_named():
    with pytest.raises(ShapeError, match=r"\[N, 6\]"):
        record("a.png", np.zeros((2, 4)), LABELS)
    with pytest.raises(DataError, match="class id 5 has no label"):
        record("a.png", [[5, 0.5, 0, 0, 1, 1]], LABELS)


def test_json_is_written_whole(tmp_path):
    target = tmp_path / "out" / "dets.json"
    recs = [record("a.png", ROWS, LABELS), record("b.png", ROWS[:1], LABELS)]
    write_json(target, recs)
    assert json.loads(target.read_text()) == json.loads(json.dumps(recs))
    assert [p.name for p in target.parent.iterdir()] == ["dets.json"]  # no temporary file left
    with pytest.raises(DataError, match="is a directory"):
        write_json(tmp_path, recs)


def test_picture_shows_each_box(tmp_path):
    image = np.full((200, 200, 3), 255, np.uint8)
    rec = record("a.png", ROWS, LABELS)
    drawn = draw(image, rec)
    assert (image == 255).all(), "draw works on a copy"
    assert (drawn[40, 10] != 255).any() and (drawn[120, 190] != 255).any()  # both boxes' left/right edges
    write_picture(tmp_path / "a.png", image, rec)
    assert np.array_equal(cv2.imread(str(tmp_path / "a.png"))[..., ::-1], drawn)
    with pytest.raises(ShapeError, match="H x W x 3"):
        draw(np.zeros((5, 5), np.uint8), rec)
